package redisstore_test

import (
	"log"

	"github.com/contextasm/contextasm/contextasm"
	"github.com/contextasm/contextasm/learned/redisstore"
)

// Every replica of an agent service opens the same store: they learn
// together, and a global block one of them declares reaches the others.
func ExampleOpen() {
	store, err := redisstore.Open("redis://agent:secret@10.0.0.5:6379/0?prefix=loans")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	eng, err := contextasm.New(contextasm.Config{State: store})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close() // sends what is still queued
	// eng.Declare, eng.Assemble, eng.Feedback as with one host.
}
