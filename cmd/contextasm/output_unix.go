//go:build unix

package main

import "syscall"

// openNoFollow makes opening a symbolic link fail.
const openNoFollow = syscall.O_NOFOLLOW
