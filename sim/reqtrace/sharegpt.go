package reqtrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/schema"
)

// shareGPT reads a ShareGPT V3 JSON array as kv-cache.py's ShareGPT loader
// does without tiktoken: for each of the first max conversations, the turn
// pairs (turns[i], turns[i+1]) for i = 0, 2, 4, ... are requests when the
// first is from "human" and the second from "gpt", with
// max(1, characters/4) tokens, capped at ShareGPTMaxInputTokens and
// ShareGPTMaxOutputTokens. It decodes one conversation at a time. Keys
// are matched exactly, as the reference's Python reads them (keyError).
type shareGPT struct {
	base
	skipList
	lc    *lineCounter
	dec   *json.Decoder
	max   int // conversations to read; 0 for all
	index int // conversations decoded so far

	conv     *sharegptConv
	id       string // the current conversation's id
	convLine int    // line where it starts
	next     int    // index of the next turn pair's first turn
}

var (
	_ Reader  = (*shareGPT)(nil)
	_ Skipper = (*shareGPT)(nil)
)

type sharegptConv struct {
	ID            json.RawMessage `json:"id"`
	Conversations []sharegptTurn  `json:"conversations"`
}

type sharegptTurn struct {
	From  string `json:"from"`
	Value string `json:"value"`
}

// newShareGPT returns a nil Reader, not a typed nil, with an error.
func newShareGPT(b base, r io.Reader, maxConv int) (Reader, error) {
	g := &shareGPT{base: b, max: maxConv, conv: &sharegptConv{}}
	g.lc = &lineCounter{r: r, limit: MaxConversationBytes}
	g.dec = json.NewDecoder(g.lc)
	tok, err := g.dec.Token()
	if err != nil {
		return nil, g.decodeError(err, "want a JSON array of conversations")
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, &ParseError{File: g.name, Line: g.lineAt(g.dec.InputOffset()), Value: parsemsg.Shorten(fmt.Sprint(tok)), Err: ErrBadJSON, Detail: "want a JSON array of conversations"}
	}
	g.lc.advance(g.dec.InputOffset())
	return g, nil
}

func (g *shareGPT) format() Format { return FormatShareGPT }

// Next implements Reader.
func (g *shareGPT) Next(req *Request) error {
	if g.err != nil {
		return g.err
	}
	for {
		turns := g.conv.Conversations
		if g.next+1 < len(turns) {
			i := g.next
			g.next += 2
			h, a := &turns[i], &turns[i+1]
			if h.From != "human" || a.From != "gpt" {
				g.add(&ParseError{
					File:   g.name,
					Line:   g.convLine,
					Column: "conversations",
					Value:  parsemsg.Shorten(h.From + "," + a.From),
					Err:    ErrNotPair,
					Detail: fmt.Sprintf("conversation %q turn %d: want human then gpt", g.id, i/2+1),
				})
				continue
			}
			*req = Request{
				InputTokens:  estimateTokens(h.Value, ShareGPTMaxInputTokens),
				OutputTokens: estimateTokens(a.Value, ShareGPTMaxOutputTokens),
				Conversation: g.id,
				Turn:         i/2 + 1,
			}
			return nil
		}
		if err := g.nextConversation(); err != nil {
			return g.fail(err)
		}
	}
}

// estimateTokens is the reference's fallback tokenizer: a token per four
// characters (Python's len, which counts code points), at least one, capped.
func estimateTokens(s string, limit int) int {
	return min(max(1, utf8.RuneCountInString(s)/4), limit)
}

// nextConversation decodes the next element of the array, or returns
// io.EOF after the last one, or the max-th.
func (g *shareGPT) nextConversation() error {
	if g.max > 0 && g.index >= g.max {
		return io.EOF
	}
	if !g.dec.More() {
		return g.end()
	}
	prev := g.dec.InputOffset()
	// Decode into a fresh value: encoding/json keeps fields a new element
	// lacks, and reuses slice elements.
	*g.conv = sharegptConv{}
	p := g.conv
	if err := g.dec.Decode(&p); err != nil {
		return g.decodeError(err, "want a conversation object")
	}
	start := g.lc.skip(prev)
	g.convLine = g.lineAt(start)
	if p == nil {
		return &ParseError{File: g.name, Line: g.convLine, Value: "null", Err: ErrBadJSON, Detail: "want a conversation object"}
	}
	// The element's bytes are still in the line counter's window.
	if err := schema.CheckKeys(g.lc.win[start-g.lc.start:g.dec.InputOffset()-g.lc.start], &sharegptConv{}); err != nil {
		line := g.convLine
		var ke *schema.KeyError
		if errors.As(err, &ke) {
			line = g.lineAt(start + ke.Offset)
		}
		return keyError(g.name, line, err)
	}
	id, err := g.conversationID(g.index)
	if err != nil {
		return err
	}
	g.id = id
	g.index++
	g.next = 0
	g.lc.advance(g.dec.InputOffset())
	return nil
}

// end reads the closing bracket and checks that nothing follows it.
func (g *shareGPT) end() error {
	tok, err := g.dec.Token()
	if err != nil {
		return g.decodeError(err, "want ] after the last conversation")
	}
	if d, ok := tok.(json.Delim); !ok || d != ']' {
		// More says no element follows, so this is } or an error.
		return &ParseError{File: g.name, Line: g.lineAt(g.dec.InputOffset()), Value: parsemsg.Shorten(fmt.Sprint(tok)), Err: ErrBadJSON, Detail: "want ] after the last conversation"}
	}
	g.lc.advance(g.dec.InputOffset())
	if tok, err := g.dec.Token(); err != io.EOF {
		if err != nil {
			return g.decodeError(err, "want nothing after the array")
		}
		return &ParseError{File: g.name, Line: g.lineAt(g.dec.InputOffset()), Value: parsemsg.Shorten(fmt.Sprint(tok)), Err: ErrBadJSON, Detail: "want nothing after the array"}
	}
	return io.EOF
}

// conversationID returns the element's id, or "conv_<index>" when it has
// none, a null or an empty one. A numeric id is taken as written. The
// reference takes conversation.get('id', 'conv_'+idx): a null id becomes
// "None" and an empty one "", so that all such conversations share their
// keys; here each has its own.
func (g *shareGPT) conversationID(index int) (string, error) {
	raw := g.conv.ID
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", g.decodeError(err, "want a string id")
		}
		if s != "" {
			return s, nil
		}
	case isJSONNumber(raw):
		return string(raw), nil
	default:
		return "", &ParseError{File: g.name, Line: g.convLine, Column: "id", Value: parsemsg.Shorten(raw), Err: ErrBadJSON, Detail: "want a string"}
	}
	return "conv_" + strconv.Itoa(index), nil
}

// decodeError turns an error of the JSON decoder into a *ParseError, or an
// I/O error.
func (g *shareGPT) decodeError(err error, want string) error {
	off := g.dec.InputOffset()
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case g.isIO(err):
		return parsemsg.ReadError("reqtrace", g.name, g.lineAt(g.lc.n), err)
	case err == errBudget:
		return &ParseError{File: g.name, Line: g.lineAt(g.lc.skip(g.lc.start)), Err: ErrTooLong, Detail: "a conversation is limited to " + strconv.Itoa(g.lc.limit) + " bytes"}
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return &ParseError{File: g.name, Line: g.lineAt(g.lc.n), Err: ErrBadJSON, Detail: "unexpected end of input, " + want}
	case errors.As(err, &se):
		if at := g.syntaxAt(); at >= 0 {
			return &ParseError{File: g.name, Line: g.lineAt(at), Col: g.lc.colAt(at), Err: ErrBadJSON, Detail: se.Error()}
		}
		return &ParseError{File: g.name, Line: g.lineAt(se.Offset), Err: ErrBadJSON, Detail: se.Error()}
	case errors.As(err, &te):
		// te.Offset can be before the element; the element is where to look.
		off := max(te.Offset, g.lc.skip(g.lc.start))
		return &ParseError{File: g.name, Line: g.lineAt(off), Column: te.Field, Err: ErrBadJSON, Detail: "got " + te.Value + ", want " + jsonKind(te.Type)}
	}
	return &ParseError{File: g.name, Line: g.lineAt(off), Err: ErrBadJSON, Detail: err.Error()}
}

// syntaxAt returns the offset of the byte where the element being decoded
// stops being JSON, or -1. The decoder's SyntaxError.Offset counts only
// the bytes its values were scanned from, not those its Token calls read
// (the '[' and the commas between elements): the element's bytes, which
// the lineCounter holds, are scanned again alone.
func (g *shareGPT) syntaxAt() int64 {
	from := g.lc.skip(g.lc.start)
	d := json.NewDecoder(bytes.NewReader(g.lc.win[from-g.lc.start:]))
	var v any
	var se *json.SyntaxError
	if err := d.Decode(&v); errors.As(err, &se) && se.Offset > 0 {
		return from + se.Offset - 1
	}
	return -1
}

// jsonKind names the JSON value a Go type decodes.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	}
	return t.String()
}

func (g *shareGPT) lineAt(off int64) int { return g.lc.lineAt(off) }

// lineCounter passes a reader through to the JSON decoder, remembering the
// bytes the decoder may still report an error in (those after the last
// advance), so that a decoder offset can be told as a line. It also bounds
// them: a conversation can be at most MaxConversationBytes.
type lineCounter struct {
	r     io.Reader
	limit int    // most bytes held in win
	n     int64  // bytes read so far
	start int64  // offset of win[0]
	lines int    // newlines before start
	col0  int    // bytes of start's line before start
	win   []byte // bytes from start to n
}

// lineChunk bounds a single read, so that the decoder reads ahead of the
// value it decodes by at most that much.
const lineChunk = 64 << 10

func (c *lineCounter) Read(p []byte) (int, error) {
	if len(c.win) > c.limit {
		return 0, errBudget
	}
	if len(p) > lineChunk {
		p = p[:lineChunk]
	}
	n, err := c.r.Read(p)
	c.win = append(c.win, p[:n]...)
	c.n += int64(n)
	return n, err
}

// advance forgets the bytes before off, counting their lines.
func (c *lineCounter) advance(off int64) {
	k := int(min(max(off-c.start, 0), int64(len(c.win))))
	c.lines += bytes.Count(c.win[:k], []byte{'\n'})
	if j := bytes.LastIndexByte(c.win[:k], '\n'); j >= 0 {
		c.col0 = k - j - 1
	} else {
		c.col0 += k
	}
	c.win = c.win[:copy(c.win, c.win[k:])]
	c.start += int64(k)
}

// skip returns the offset of the first byte from off on that is not
// whitespace or a comma: where the next element starts.
func (c *lineCounter) skip(off int64) int64 {
	for i := max(off-c.start, 0); i < int64(len(c.win)); i++ {
		switch c.win[i] {
		case ' ', '\t', '\r', '\n', ',':
		default:
			return c.start + i
		}
	}
	return off
}

// lineAt returns the 1-based line of the byte at offset off, which must not
// be before the last advance (it then answers that line).
func (c *lineCounter) lineAt(off int64) int {
	k := int(min(max(off-c.start, 0), int64(len(c.win))))
	return c.lines + bytes.Count(c.win[:k], []byte{'\n'}) + 1
}

// colAt returns the 1-based column of the byte at offset off on its line;
// 0 where off is not in the bytes kept.
func (c *lineCounter) colAt(off int64) int {
	k := off - c.start
	if k < 0 || k >= int64(len(c.win)) {
		return 0
	}
	if j := bytes.LastIndexByte(c.win[:k], '\n'); j >= 0 {
		return int(k) - j
	}
	return c.col0 + int(k) + 1
}

// line returns the line where the last request's conversation starts.
func (g *shareGPT) line() int { return g.convLine }
