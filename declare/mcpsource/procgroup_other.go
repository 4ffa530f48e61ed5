//go:build !unix

package mcpsource

import "os/exec"

// ownProcessGroup does nothing here: only Unix systems get process groups.
func ownProcessGroup(*exec.Cmd) {}

// killGroup does nothing here; the SDK's Close has ended the server itself.
func killGroup(*exec.Cmd) {}
