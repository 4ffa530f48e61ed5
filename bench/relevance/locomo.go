package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LoCoMo is a public benchmark of long conversations: ten dialogues of
// 19 to 32 sessions (369 to 689 turns) between two people, with about 200
// questions each whose evidence turns are labelled. It is read from a
// folder of its JSON files (one conversation a file), which this
// repository does not hold: it measures the scorer and must not train it.

// locomoFile is what the harness reads of a LoCoMo file: speaker_a,
// speaker_b, session_N and session_N_date_time (read from the raw
// object), and qa.
type locomoFile struct {
	SpeakerA string `json:"speaker_a"`
	QA       []struct {
		Question string          `json:"question"`
		Evidence []string        `json:"evidence"`
		Category json.RawMessage `json:"category"`
	} `json:"qa"`
}

type locomoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// dateLayout is LoCoMo's session time: "1:56 pm on 8 May, 2023".
const dateLayout = "3:04 pm on 2 January, 2006"

// turnGap is the time between two turns of a session: LoCoMo dates
// sessions, not turns.
const turnGap = 30 * time.Second

// loadLoCoMo reads every *.json file of dir, in name order.
func loadLoCoMo(dir string) ([]*Conversation, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("locomo: no *.json file in %s", dir)
	}
	slices.Sort(files)
	var convs []*Conversation
	for _, f := range files {
		c, err := readLoCoMo(f)
		if err != nil {
			return nil, err
		}
		convs = append(convs, c)
	}
	return convs, nil
}

// readLoCoMo reads one conversation. A turn's content is "Speaker: text",
// and a photo the speaker shares is written after it as its caption
// ("[shares a photo of …]"), as a host would keep it in text.
func readLoCoMo(path string) (*Conversation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f locomoFile
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("locomo: %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("locomo: %s: %w", path, err)
	}
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	c := &Conversation{Name: "locomo-" + name}
	var sessions []int
	for k := range raw {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			sessions = append(sessions, n)
		}
	}
	slices.Sort(sessions)
	index := make(map[string]int)
	for _, s := range sessions {
		var turns []locomoTurn
		if err := json.Unmarshal(raw[fmt.Sprintf("session_%d", s)], &turns); err != nil {
			return nil, fmt.Errorf("locomo: %s: session_%d: %w", path, s, err)
		}
		if len(turns) == 0 {
			continue
		}
		var when string
		if err := json.Unmarshal(raw[fmt.Sprintf("session_%d_date_time", s)], &when); err != nil {
			return nil, fmt.Errorf("locomo: %s: session_%d_date_time: %w", path, s, err)
		}
		start, err := time.Parse(dateLayout, when)
		if err != nil {
			return nil, fmt.Errorf("locomo: %s: session_%d_date_time: %w", path, s, err)
		}
		for i, t := range turns {
			content := t.Speaker + ": " + t.Text
			if t.BlipCaption != "" {
				content += " [shares " + t.BlipCaption + "]"
			}
			role := "assistant"
			if t.Speaker == f.SpeakerA {
				role = "user"
			}
			if _, dup := index[t.DiaID]; dup || t.DiaID == "" {
				return nil, fmt.Errorf("locomo: %s: session_%d: turn %d: dia_id %q empty or repeated", path, s, i, t.DiaID)
			}
			index[t.DiaID] = len(c.Turns)
			c.Turns = append(c.Turns, Turn{
				ID: t.DiaID, Session: s, Role: role, Content: content,
				Time: start.Add(time.Duration(i) * turnGap),
			})
		}
	}
	for _, qa := range f.QA {
		ev, ok := evidence(qa.Evidence, index)
		if !ok {
			c.Skipped++
			continue
		}
		c.Questions = append(c.Questions, Question{Text: qa.Question, Evidence: ev, Category: string(qa.Category)})
	}
	return c, c.check()
}

// evidenceID is a dia_id as the evidence lists write it, including the
// slips of a few entries ("D:11:26", several ids in one string).
var evidenceID = regexp.MustCompile(`D:?(\d+):(\d+)`)

// evidence resolves a question's evidence to turn indexes; ok is false
// when it names no turn, or one the conversation does not have.
func evidence(ids []string, index map[string]int) ([]int, bool) {
	var out []int
	for _, s := range ids {
		ms := evidenceID.FindAllStringSubmatch(s, -1)
		if len(ms) == 0 {
			return nil, false
		}
		for _, m := range ms {
			i, ok := index["D"+m[1]+":"+m[2]]
			if !ok {
				return nil, false
			}
			out = append(out, i)
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	slices.Sort(out)
	return slices.Compact(out), true
}
