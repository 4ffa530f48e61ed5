package bench

import (
	"testing"

	"github.com/contextasm/contextasm/chat"
	"github.com/contextasm/contextasm/contextasm"
)

// BenchmarkAssembleTurnChat is BenchmarkAssembleTurn in the OpenAI chat
// format: history as messages, the newest user turn required (the
// current turn), and the body encoded (Result.Body).
func BenchmarkAssembleTurnChat(b *testing.B) {
	benchTurns(b, false, func(r *contextasm.Request) { r.Format = chat.FormatOpenAI })
}
