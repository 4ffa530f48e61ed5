package feedback_test

import (
	"path/filepath"
	"testing"

	"github.com/contextasm/contextasm/feedback"
	"github.com/contextasm/contextasm/internal/storetest"
)

func TestFileStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		return feedback.NewFileStore(filepath.Join(t.TempDir(), "state.json"))
	})
}
