//go:build race

package hftok

const raceEnabled = true
