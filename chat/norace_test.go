//go:build !race

package chat_test

// raceEnabled reports whether the race detector is on; allocation counts
// are not asserted under it.
const raceEnabled = false
