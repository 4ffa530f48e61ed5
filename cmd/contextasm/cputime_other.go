//go:build !unix

package main

import "time"

// processCPU is unknown here: bench reports a CPU time of 0.
func processCPU() time.Duration { return 0 }
