//go:build !race

package strictjson_test

const raceEnabled = false
