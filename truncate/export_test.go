package truncate

// Descending exposes descending to the external tests.
var Descending = descending
