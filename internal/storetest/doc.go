// Package storetest is the conformance suite every learned-state store
// passes: the file store and the Redis store run the same tests, so the
// embedded default and a shared backend mean the same thing by Apply and
// Changes.
package storetest
