package learned

import "testing"

func TestHotTruncated(t *testing.T) {
	tests := []struct {
		h    Heat
		want bool
	}{
		{Heat{}, false},
		{Heat{Included: 3, Dropped: 1, Refs: 2}, true},           // cited 2 of 3 shown, dropped 1 of 4
		{Heat{Included: 2, Cut: 2, Refs: 2, StartRefs: 1}, true}, // cut half the time
		{Heat{Included: 10, Dropped: 1, Refs: 9}, false},         // rarely truncated
		{Heat{Included: 10, Dropped: 10, Refs: 2}, false},        // rarely cited when shown
		{Heat{Included: 1, Dropped: 5, Refs: 1}, false},          // one citation is not hot
		{Heat{Dropped: 5, Refs: 3}, false},                       // never shown
	}
	for _, tt := range tests {
		if got := tt.h.HotTruncated(); got != tt.want {
			t.Errorf("%+v.HotTruncated() = %v, want %v", tt.h, got, tt.want)
		}
	}
}
