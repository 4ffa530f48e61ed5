package feedback

import (
	"errors"
	"slices"
	"testing"
)

func TestEvaluateCited(t *testing.T) {
	blocks := []Block{{RequestID: "a", Trust: 0.5}, {RequestID: "b", Trust: 0.5}, {RequestID: "c", Trust: 0.5}}
	response := "First <memory_ref id=\"b\"/>, then a long stretch of text that puts the rest in later thirds of the answer, and <memory_ref id=\"c\"/> at the end."
	end := len(response) - 1
	tests := []struct {
		name    string
		cited   []Tag
		refs    []Ref
		unknown []string
	}{
		{"none", nil, []Ref{{RequestID: "b", Position: Start}, {RequestID: "c", Position: End}}, []string{}},
		{"cited first", []Tag{{ID: "a", Offset: 0}}, []Ref{{RequestID: "a", Position: Start}, {RequestID: "b", Position: Start}, {RequestID: "c", Position: End}}, []string{}},
		// A structured citation of c before its tag moves its first
		// citation, and so its gain.
		{"earlier than the tag", []Tag{{ID: "c", Offset: 2}}, []Ref{{RequestID: "c", Position: Start}, {RequestID: "b", Position: Start}}, []string{}},
		{"later than the tag", []Tag{{ID: "b", Offset: end}}, []Ref{{RequestID: "b", Position: Start}, {RequestID: "c", Position: End}}, []string{}},
		{"unknown", []Tag{{ID: "zz", Offset: end}, {ID: "a", Offset: end}}, []Ref{{RequestID: "b", Position: Start}, {RequestID: "c", Position: End}, {RequestID: "a", Position: End}}, []string{"zz"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := EvaluateCited(blocks, response, tt.cited, DefaultPolicy())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Refs, tt.refs) {
				t.Errorf("refs = %+v, want %+v", res.Refs, tt.refs)
			}
			if !slices.Equal(res.UnknownRefs, tt.unknown) {
				t.Errorf("unknown = %q, want %q", res.UnknownRefs, tt.unknown)
			}
			if res.ModelResponseHash != HashResponse(response) {
				t.Error("the response hash is not the response's")
			}
		})
	}
	// Without citations it is Evaluate.
	plain, err := Evaluate(blocks, response, DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	cited, err := EvaluateCited(blocks, response, []Tag{}, DefaultPolicy())
	if err != nil || !slices.Equal(plain.Refs, cited.Refs) || !slices.Equal(plain.TrustChanges, cited.TrustChanges) {
		t.Errorf("EvaluateCited without citations = %+v, %v; Evaluate = %+v", cited, err, plain)
	}
}

func TestEvaluateCitedErrors(t *testing.T) {
	for _, c := range []Tag{{ID: "", Offset: 0}, {ID: "a", Offset: -1}, {ID: "a", Offset: 4}} {
		if _, err := EvaluateCited([]Block{{RequestID: "a"}}, "abc", []Tag{c}, DefaultPolicy()); !errors.Is(err, ErrInvalidCitation) {
			t.Errorf("cited %+v: error %v, want ErrInvalidCitation", c, err)
		}
	}
}
