// Package pattern is the cost model of violation patterns, which are RE2
// expressions matched by Go's regexp package. regexp never backtracks
// exponentially: matching a text costs at most one step per instruction of
// the compiled program per byte of text. So the program's size, not the
// expression's length, is what to bound: "[a-z ]{1000}x" is 13 bytes and
// compiles to 1,003 instructions, all of which can be alive at once.
//
// Package declare bounds each pattern's size when it is declared; package
// feedback bounds the size of all the patterns it checks times the length
// of the response.
package pattern
