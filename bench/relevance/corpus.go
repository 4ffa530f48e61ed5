package main

import (
	"fmt"
	"time"

	"github.com/contextasm/contextasm/internal/bpe"
	"github.com/contextasm/contextasm/internal/lexical"
)

// A Conversation is one long multi-session dialogue and the questions
// asked about it after its last turn.
type Conversation struct {
	Name      string
	Turns     []Turn // in time order
	Questions []Question
	// Skipped counts the questions left out because their evidence names
	// no turn of the conversation.
	Skipped int
}

// A Turn is one history block: a speaker's line, dated.
type Turn struct {
	ID      string // its request_id: LoCoMo's dia_id ("D3:7")
	Session int    // 1-based
	Role    string // user (the first speaker) or assistant
	Content string // as declared: "Speaker: text"
	Time    time.Time

	tokens int // of its line (content and newline), o200k_base
	doc    lexical.Doc
}

// A Question is asked after the last turn; its evidence is the turns that
// must all be in the context for it to be answerable.
type Question struct {
	Text     string
	Evidence []int // indexes into Turns, ascending, distinct
	Category string

	tokens int
	doc    lexical.Doc
}

// headerTokens is what the rendered text's header line costs
// ("[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:…]" and its newline): the
// simulated arms leave it out of the budget as the engine does.
var headerTokens int

// prepare counts and analyses every turn and question once.
func prepare(convs []*Conversation, tok *bpe.Tokenizer) {
	headerTokens = tok.Count("[MODEL_CONTEXT_PROTOCOL v1.2 | fp:sha256:92b7542d4335730d]\n")
	for _, c := range convs {
		for i := range c.Turns {
			t := &c.Turns[i]
			t.tokens = tok.Count(t.Content + "\n")
			t.doc = lexical.Analyze(t.Content)
		}
		for i := range c.Questions {
			q := &c.Questions[i]
			q.tokens = tok.Count(q.Text + "\n")
			q.doc = lexical.Analyze(q.Text)
		}
	}
}

// askedAt is when question j of c is asked: a minute after the last turn,
// and a minute after the question before it (questions asked one after
// another in one session).
func (c *Conversation) askedAt(j int) time.Time {
	return c.Turns[len(c.Turns)-1].Time.Add(time.Duration(j+1) * time.Minute)
}

// check reports a conversation that cannot be evaluated.
func (c *Conversation) check() error {
	if len(c.Turns) == 0 {
		return fmt.Errorf("%s: no turns", c.Name)
	}
	for i := 1; i < len(c.Turns); i++ {
		if c.Turns[i].Time.Before(c.Turns[i-1].Time) {
			return fmt.Errorf("%s: turn %s is dated before the turn before it", c.Name, c.Turns[i].ID)
		}
	}
	for j, q := range c.Questions {
		if len(q.Evidence) == 0 {
			return fmt.Errorf("%s: question %d has no evidence", c.Name, j)
		}
	}
	return nil
}

// stats sums a set of conversations.
func stats(convs []*Conversation) (turns, questions, skipped, tokens int) {
	for _, c := range convs {
		turns += len(c.Turns)
		questions += len(c.Questions)
		skipped += c.Skipped
		for _, t := range c.Turns {
			tokens += t.tokens
		}
	}
	return
}
