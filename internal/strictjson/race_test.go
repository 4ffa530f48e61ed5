//go:build race

package strictjson_test

const raceEnabled = true
