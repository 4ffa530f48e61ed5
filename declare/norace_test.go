//go:build !race

package declare_test

const raceEnabled = false
