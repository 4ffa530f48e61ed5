//go:build race

package bpe

const raceEnabled = true
