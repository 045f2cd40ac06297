package store

import (
	"slices"
	"strings"
)

// Postgres text (and jsonb) refuses the NUL character, which JSON allows
// and Gitea passes through from whatever a user pasted. A delivery that
// carries one can never be stored as sent, and refusing it would make
// Gitea's redelivery fail the same way forever, so every text column
// written from the forge goes through cleanText: NUL becomes U+FFFD (the
// replacement character) and invalid UTF-8 is replaced the same way. The
// raw payload is kept as bytes in deliveries.payload, so nothing is lost.
const replacement = "\uFFFD"

func cleanText(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", replacement)
	}
	return strings.ToValidUTF8(s, replacement)
}

func cleanTexts(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	var out []string
	for i, s := range ss {
		if c := cleanText(s); c != s {
			if out == nil {
				out = slices.Clone(ss)
			}
			out[i] = c
		}
	}
	if out == nil {
		return ss
	}
	return out
}
