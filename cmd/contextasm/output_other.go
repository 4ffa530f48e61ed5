//go:build !unix

package main

import (
	"io/fs"
	"os"
)

const openNoFollow = 0

func keepOwner(*os.File, fs.FileInfo) {}
