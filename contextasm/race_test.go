//go:build race

package contextasm_test

const raceEnabled = true
