//go:build !race

package template_test

const raceEnabled = false
