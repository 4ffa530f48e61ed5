//go:build !unix

package main

const openNoFollow = 0
