package chat

// ReferenceEncode is Encode as encoding/json wrote the bodies
// (reference_test.go), for the differential tests of package chat_test.
var ReferenceEncode = referenceEncode
