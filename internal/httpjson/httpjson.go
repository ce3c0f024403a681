// Package httpjson writes the JSON that tally's functions and command
// answer with: one value a line, with <, > and & as they are, not escaped
// for HTML, since people read these answers in curl and terminals.
package httpjson

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// Encode is v as one line of JSON, newline included.
func Encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null\n")
	}
	return b.Bytes()
}

// Write answers with status code and v as the JSON body.
func Write(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	w.Write(Encode(v))
}

// Error answers with status code and {"error": msg}.
func Error(w http.ResponseWriter, code int, msg string) {
	Write(w, code, map[string]string{"error": msg})
}
