package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// utf8BOM is U+FEFF in UTF-8, which some editors put at the start of a
// file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Text tells how a document that starts with prefix (its first four bytes
// are enough) is encoded, when that is not plain UTF-8. skip is the length
// of a UTF-8 byte-order mark to drop (3), else 0. foreign, when not "",
// names the other encoding the document is in, for a message such as "the
// file is UTF-16LE (byte-order mark FF FE); save it as UTF-8": JSON read
// here must be UTF-8, and encoding/json would only say "invalid character".
//
// Without a byte-order mark, UTF-16 and UTF-32 are recognised by the NUL
// bytes around the first character: no JSON text can start with a NUL.
func Text(prefix []byte) (skip int, foreign string) {
	p := prefix
	switch {
	case bytes.HasPrefix(p, utf8BOM):
		return len(utf8BOM), ""
	case bytes.HasPrefix(p, []byte{0xFF, 0xFE, 0, 0}):
		return 0, "UTF-32LE (byte-order mark FF FE 00 00)"
	case bytes.HasPrefix(p, []byte{0, 0, 0xFE, 0xFF}):
		return 0, "UTF-32BE (byte-order mark 00 00 FE FF)"
	case bytes.HasPrefix(p, []byte{0xFF, 0xFE}):
		return 0, "UTF-16LE (byte-order mark FF FE)"
	case bytes.HasPrefix(p, []byte{0xFE, 0xFF}):
		return 0, "UTF-16BE (byte-order mark FE FF)"
	case len(p) >= 4 && p[0] != 0 && p[1] == 0 && p[2] == 0 && p[3] == 0:
		return 0, "UTF-32LE, without a byte-order mark"
	case len(p) >= 4 && p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] != 0:
		return 0, "UTF-32BE, without a byte-order mark"
	case len(p) >= 2 && p[0] != 0 && p[1] == 0:
		return 0, "UTF-16LE, without a byte-order mark"
	case len(p) >= 2 && p[0] == 0 && p[1] != 0:
		return 0, "UTF-16BE, without a byte-order mark"
	}
	return 0, ""
}

// DecodeMessage phrases an error of encoding/json's decoding a value for a
// message that already names the field: "wrong type: want number, got JSON
// string", instead of Go's type names.
func DecodeMessage(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return fmt.Sprintf("wrong type: want %s, got JSON %s", jsonKind(typeErr.Type), typeErr.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Float64, reflect.Float32:
		return "number"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		return "integer"
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	}
	return t.String()
}
