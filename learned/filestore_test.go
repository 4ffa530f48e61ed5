package learned_test

import (
	"path/filepath"
	"testing"

	"github.com/contextasm/contextasm/internal/storetest"
	"github.com/contextasm/contextasm/learned"
)

func TestFileStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) learned.Store {
		return learned.NewFileStore(filepath.Join(t.TempDir(), "state.json"))
	})
}
