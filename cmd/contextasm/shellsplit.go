package main

import (
	"errors"
	"fmt"
	"strings"
)

// splitCommand splits a command line into words as a POSIX shell would,
// without running one: whitespace separates words; single quotes keep
// everything literally; double quotes keep everything but \" \\ \$ \` and
// backslash-newline; a backslash outside quotes keeps the next character
// (backslash-newline joins lines). Nothing is expanded, so an unquoted
// $, `, |, &, ;, <, >, ( or ) (and $ or ` inside double quotes) is an error
// rather than a surprise: a command that needs a shell says so itself,
// as in sh -c '...'.
func splitCommand(line string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	const (
		plain = iota
		single
		double
	)
	state := plain
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch state {
		case single:
			if r == '\'' {
				state = plain
				continue
			}
			cur.WriteRune(r)
		case double:
			switch r {
			case '"':
				state = plain
			case '\\':
				if i+1 < len(rs) {
					switch next := rs[i+1]; next {
					case '"', '\\', '$', '`':
						cur.WriteRune(next)
						i++
						continue
					case '\n':
						i++
						continue
					}
				}
				cur.WriteRune(r)
			case '$', '`':
				return nil, fmt.Errorf("%q: %c inside double quotes would be expanded by a shell; none runs here (escape it, or use single quotes)", line, r)
			default:
				cur.WriteRune(r)
			}
		default:
			switch r {
			case ' ', '\t', '\n':
				if inWord {
					words = append(words, cur.String())
					cur.Reset()
					inWord = false
				}
			case '\'':
				state, inWord = single, true
			case '"':
				state, inWord = double, true
			case '\\':
				if i+1 == len(rs) {
					return nil, fmt.Errorf("%q: ends with a lone backslash", line)
				}
				i++
				if rs[i] != '\n' {
					cur.WriteRune(rs[i])
					inWord = true
				}
			case '$', '`', '|', '&', ';', '<', '>', '(', ')':
				return nil, fmt.Errorf("%q: unquoted %c: the command is not run by a shell (quote it, or use sh -c '...')", line, r)
			default:
				cur.WriteRune(r)
				inWord = true
			}
		}
	}
	switch state {
	case single:
		return nil, fmt.Errorf("%q: unterminated single quote", line)
	case double:
		return nil, fmt.Errorf("%q: unterminated double quote", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}
