//go:build race

package declare_test

const raceEnabled = true
