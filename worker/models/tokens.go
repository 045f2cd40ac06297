package models

import "unicode"

// Token counting without a tokenizer.
//
// ApproxTokens estimates what a BPE tokenizer (OpenAI's cl100k/o200k,
// Llama 3, Gemma) makes of a text, without shipping vocabularies: CommiTea
// only needs prompt sizes for reports and for checking a token budget
// before a request is sent; what is billed is what the provider reports.
// The rules follow how those tokenizers split text:
//
//   - a run of letters counts one token per started 6 letters (most
//     English words are one token; long or rare words split into pieces of
//     about 4 to 6 letters);
//   - digits go in groups of up to 3 (cl100k's rule; Gemma and Llama
//     split every digit, so numbers-heavy text is underestimated there);
//   - punctuation and symbols (JSON braces, quotes, colons) count one
//     token per started pair, since BPE merges runs such as `":"` and
//     `","`; whitespace is free (it mostly merges into the next word);
//   - letters outside the Latin, Greek and Cyrillic scripts (CJK, …) count
//     one token each.
//
// On English prose and on JSON this lands within about 15% of cl100k; it
// errs high on JSON with many one-character keys. Use it with headroom.
func ApproxTokens(s string) int {
	n := 0
	letters, digits, puncts := 0, 0, 0
	flush := func() {
		if puncts > 0 {
			n += (puncts + 1) / 2
			puncts = 0
		}
		if letters > 0 {
			n += (letters + 5) / 6
			letters = 0
		}
		if digits > 0 {
			n += (digits + 2) / 3
			digits = 0
		}
	}
	for _, r := range s {
		switch {
		case r < 0x2E80 && unicode.IsLetter(r):
			if digits > 0 || puncts > 0 {
				flush()
			}
			letters++
		case unicode.IsDigit(r):
			if letters > 0 || puncts > 0 {
				flush()
			}
			digits++
		case unicode.IsSpace(r):
			flush()
		case unicode.IsLetter(r):
			flush()
			n++ // a wide-script letter
		default:
			if letters > 0 || digits > 0 {
				flush()
			}
			puncts++
		}
	}
	flush()
	return n
}

// perMessageTokens is what chat templates add around each message (role
// markers and separators).
const perMessageTokens = 4

// MessagesTokens estimates a whole prompt: every message's content and
// function-call arguments, plus the chat template's overhead.
func MessagesTokens(msgs []Message) int {
	n := 3 // the assistant turn's opening
	for _, m := range msgs {
		n += perMessageTokens + ApproxTokens(m.Content)
		for _, c := range m.Calls {
			n += ApproxTokens(c.Name) + ApproxTokens(string(c.Arguments))
		}
	}
	return n
}

// RequestTokens estimates a request's prompt: its messages plus the schema
// and function declarations sent with it.
func RequestTokens(req Request) int {
	n := MessagesTokens(req.Messages)
	if req.Schema != nil {
		// The schema goes into the prompt as an instruction, and again as
		// response_format where supported; count it once plus the wording.
		n += ApproxTokens(req.Schema.String()) + 30
	}
	for _, f := range req.Functions {
		n += ApproxTokens(f.Name) + ApproxTokens(f.Description)
		if f.Parameters != nil {
			n += ApproxTokens(f.Parameters.String())
		}
	}
	return n
}
