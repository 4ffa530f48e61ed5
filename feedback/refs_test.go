package feedback

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseRefs(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Tag // Offset checked separately where it matters
	}{
		{"self-closing double quotes", `see <memory_ref id="a" type="constraint"/>`, []Tag{{ID: "a", Type: "constraint"}}},
		{"single quotes", `<memory_ref id='b'/>`, []Tag{{ID: "b"}}},
		{"attributes in any order", `<memory_ref type="history" id="c" />`, []Tag{{ID: "c", Type: "history"}}},
		{"with closing tag", `<memory_ref id="d">note</memory_ref>`, []Tag{{ID: "d"}}},
		{"stray whitespace", "< memory_ref\n\tid = \"e\"\n type= 'x'  / >", []Tag{{ID: "e", Type: "x"}}},
		{"bare value", `<memory_ref id=f>`, []Tag{{ID: "f"}}},
		{"case-insensitive name", `<MEMORY_REF ID="g"/>`, []Tag{{ID: "g"}}},
		{"ids with URIs", `<memory_ref id="mcp:srv:file:///a/b.txt"/>`, []Tag{{ID: "mcp:srv:file:///a/b.txt"}}},
		{"joiner stripped from id", "<memory_ref id=\"x\u2060y\"/>", []Tag{{ID: "xy"}}},
		{"several", `<memory_ref id="a"/> and <memory_ref id='b'/>`, []Tag{{ID: "a"}, {ID: "b"}}},
		{"no id", `<memory_ref type="x"/>`, nil},
		{"empty id", `<memory_ref id=""/>`, nil},
		{"unclosed quote", `<memory_ref id="a/> then <memory_ref id="b"/>`, []Tag{{ID: "b"}}},
		{"never closed", `<memory_ref id="a"`, nil},
		{"other tag", `<memory_refs id="a"/> <memoryref id="b"/>`, nil},
		{"missing equals", `<memory_ref id "a"/>`, nil},
		{"slash without >", `<memory_ref id="a" / x>`, nil},
		{"nested open", `<memory_ref <memory_ref id="z"/>`, []Tag{{ID: "z"}}},
		{"plain text", `no tags here < > memory_ref`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseRefs(tt.in)
			for i := range got {
				if tt.in[got[i].Offset] != '<' {
					t.Errorf("tag %d offset %d does not point at '<'", i, got[i].Offset)
				}
				got[i].Offset = 0
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ParseRefs(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestPositionOf(t *testing.T) {
	resp := strings.Repeat("a", 30)
	for _, tt := range []struct {
		off  int
		want Position
	}{{0, Start}, {9, Start}, {10, Middle}, {19, Middle}, {20, End}, {29, End}, {99, End}} {
		if got := PositionOf(resp, tt.off); got != tt.want {
			t.Errorf("PositionOf(30 chars, %d) = %s, want %s", tt.off, got, tt.want)
		}
	}
	// Thirds are counted in characters: 10 three-byte characters then the
	// tag; by bytes the tag would sit in the middle third, by characters
	// it starts the second third of a 20-character response.
	zh := strings.Repeat("中", 10) + strings.Repeat("a", 10)
	if got := PositionOf(zh, len(strings.Repeat("中", 6))); got != Start {
		t.Errorf("multibyte: got %s, want start (6 of 20 characters)", got)
	}
	if got := PositionOf("", 0); got != Start {
		t.Errorf("empty response: got %s", got)
	}
}

func FuzzParseRefs(f *testing.F) {
	for _, s := range []string{
		`<memory_ref id="a" type="constraint"/>`, `<memory_ref type='h' id='b'></memory_ref>`,
		"< memory_ref\n id = c / >", `<memory_ref id="`, `<<memory_ref id=x>>`, "中<memory_ref id=\"中\"/>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tags := ParseRefs(s)
		last := -1
		for _, tag := range tags {
			if tag.ID == "" || strings.Contains(tag.ID, "\u2060") {
				t.Fatalf("bad id %q", tag.ID)
			}
			if tag.Offset <= last || tag.Offset >= len(s) || s[tag.Offset] != '<' {
				t.Fatalf("bad offset %d (last %d) in %q", tag.Offset, last, s)
			}
			last = tag.Offset
			// A found tag's id appears in the text (modulo joiners).
			if !strings.Contains(strings.ReplaceAll(s, "\u2060", ""), tag.ID) {
				t.Fatalf("id %q not in input", tag.ID)
			}
			_ = PositionOf(s, tag.Offset)
		}
		if utf8.ValidString(s) {
			for _, tag := range tags {
				if !utf8.ValidString(tag.ID) {
					t.Fatalf("id %q not valid UTF-8 from valid input", tag.ID)
				}
			}
		}
	})
}
