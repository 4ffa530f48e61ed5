//go:build !race

package contextasm_test

const raceEnabled = false
