package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sdods/sdods/engine"
)

// The signup comparison (bash bench/zen.sh): the conformance fixture signup evaluated by the
// engine (RuleSet.EvaluateInto, as the rule server evaluates), by signupFloor, a Go function
// written by hand for this one ruleset (the floor: what evaluating it costs with no engine at
// all), and by GoRules Zen (bench/zen/compare.mjs). All three get the same requests: the golden
// requests of the fixture that evaluate the server channel without a view (11 of 13), decoded
// once, outside the timed loop; all three must produce the golden findings and states.

// signupRequests returns the ruleset and the parsed requests with their golden results.
func signupRequests(tb testing.TB) (*engine.RuleSet, []*engine.Request, []json.RawMessage) {
	tb.Helper()
	dir := filepath.Join("..", "conformance", "fixtures", "signup")
	b, err := os.ReadFile(filepath.Join(dir, "signup.bundle.json"))
	if err != nil {
		tb.Fatal(err)
	}
	rs, err := engine.FromBundle(b)
	if err != nil {
		tb.Fatal(err)
	}
	var golden struct {
		Tests []struct {
			Channel  string          `json:"channel"`
			Request  json.RawMessage `json:"request"`
			Expected json.RawMessage `json:"expected"`
		} `json:"tests"`
	}
	if b, err = os.ReadFile(filepath.Join(dir, "evaluations.json")); err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		tb.Fatal(err)
	}
	var reqs []*engine.Request
	var want []json.RawMessage
	for _, g := range golden.Tests {
		req, err := engine.ParseRequest(g.Request)
		if err != nil {
			tb.Fatal(err)
		}
		if g.Channel != "" && g.Channel != engine.ChannelServer || req.View != nil {
			continue
		}
		reqs, want = append(reqs, req), append(want, g.Expected)
	}
	return rs, reqs, want
}

// TestSignupFloorMatchesEngine checks that the floor and the engine give the golden findings and
// states for every request of the comparison.
func TestSignupFloorMatchesEngine(t *testing.T) {
	rs, reqs, want := signupRequests(t)
	if len(reqs) != 11 {
		t.Fatalf("%d requests, want 11", len(reqs))
	}
	var floor, eng engine.Result
	for i, req := range reqs {
		signupFloor(req, &floor)
		if err := rs.EvaluateInto(&eng, engine.ChannelServer, req); err != nil {
			t.Fatal(err)
		}
		for name, res := range map[string]*engine.Result{"floor": &floor, "engine": &eng} {
			b, err := res.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Findings, States json.RawMessage
			}
			var exp struct {
				Findings, States json.RawMessage
			}
			_ = json.Unmarshal(b, &got)
			_ = json.Unmarshal(want[i], &exp)
			if !sameJSON(got.Findings, exp.Findings) || !sameJSON(got.States, exp.States) {
				t.Errorf("request %d, %s:\n got %s\nwant %s", i, name, b, want[i])
			}
		}
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// BenchmarkSignup times one evaluation of the comparison's requests in turn, by the engine into
// a reused Result, and by the floor into a reused Result. Run it on one core (GOMAXPROCS=1,
// taskset), as bench/zen.sh does.
func BenchmarkSignup(b *testing.B) {
	rs, reqs, _ := signupRequests(b)
	b.Run("engine=EvaluateInto", func(b *testing.B) {
		var res engine.Result
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := rs.EvaluateInto(&res, engine.ChannelServer, reqs[i%len(reqs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine=floor", func(b *testing.B) {
		var res engine.Result
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			signupFloor(reqs[i%len(reqs)], &res)
		}
	})
}

var signupRef = engine.RulesetRef{ID: "signup", Version: "1.0.0",
	Checksum: "sha256:28669c1e6fe4483725a3c83bced56480baf63085e0b8d4c3070ff94bcda1a758"}

// businessStates are the states of the state rule business-fields, in the order of
// engine.States; constant, so shared.
var businessStates = engine.States{
	{Field: "profile.company", Props: []engine.Property{{Name: "hidden", Value: false}, {Name: "required", Value: true}}},
	{Field: "profile.vatNumber", Props: []engine.Property{{Name: "hidden", Value: false}}},
}

var (
	locAccount  = engine.Location{Page: "signup", Section: "account"}
	locConfirm  = engine.Location{Page: "signup", Section: "account", Component: "passwordConfirm"}
	locProfile  = engine.Location{Page: "signup", Section: "profile"}
	locConsent  = engine.Location{Page: "signup", Section: "consent"}
	locTerms    = engine.Location{Page: "signup", Section: "consent", Component: "termsCheckbox"}
	locNoTarget = engine.Location{}
)

// signupFloor is the signup ruleset's server channel written by hand in Go for requests whose
// members have the types the rules expect (strings, booleans, objects, absent or null): the
// rules in document order, each finding with its message in English, and the state rule. It
// writes into res, reusing its findings, as EvaluateInto does.
func signupFloor(req *engine.Request, res *engine.Result) {
	data, _ := req.Data.(map[string]any)
	account, _ := data["account"].(map[string]any)
	profile, _ := data["profile"].(map[string]any)
	consent, _ := data["consent"].(map[string]any)
	original, _ := req.Original.(map[string]any)
	origAccount, _ := original["account"].(map[string]any)
	ctx, _ := req.Ctx.(map[string]any)

	fr := req.Locale == "fr" || strings.HasPrefix(req.Locale, "fr-") // the catalogs: en, fr (fr-CA falls back to fr)
	res.Ruleset = signupRef
	res.States = nil
	f := res.Findings[:0]
	add := func(rule, code, severity, field, message string, loc engine.Location) {
		f = append(f, engine.Finding{Code: code, Severity: severity, Message: message, Field: field, Rule: rule, Location: loc})
	}
	email, emailStr := account["email"].(string)
	emailBlank := blank(account["email"])
	if emailBlank {
		add("email-required", "EMAIL_REQUIRED", "error", "account.email", pick(fr, "account.email is required.", "account.email est obligatoire."), locAccount)
	}
	if !emailBlank && emailStr && !validEmail(email) {
		add("email-format", "EMAIL_INVALID", "error", "account.email", pick(fr, email+" is not a valid e-mail address.", email+" n'est pas une adresse e-mail valide."), locNoTarget)
	}
	password, _ := account["password"].(string)
	if utf8.RuneCountInString(password) < 8 {
		add("password-length", "PASSWORD_TOO_SHORT", "error", "account.password", pick(fr, "The password needs at least 8 characters.", "Le mot de passe doit compter au moins 8 caractères."), locAccount)
	}
	if account["passwordConfirm"] != account["password"] {
		add("password-match", "PASSWORD_MISMATCH", "error", "account.passwordConfirm", pick(fr, "The passwords do not match.", "Les mots de passe ne correspondent pas."), locConfirm)
	}
	if username, _ := account["username"].(string); !validUsername(username) {
		add("username-format", "USERNAME_INVALID", "error", "account.username",
			"A user name has 3 to 20 lower-case letters, digits or '_', starting with a letter.", locAccount)
	}
	birth, _ := profile["birthDate"].(string)
	by, bm, bd, birthIsDate := parseDate(birth)
	if !blank(profile["birthDate"]) && !birthIsDate {
		add("birthdate-invalid", "BIRTHDATE_INVALID", "error", "profile.birthDate", birth+" is not a date.", locProfile)
	}
	if birthIsDate {
		today, _ := ctx["today"].(string)
		if ty, tm, td, ok := parseDate(today); ok {
			years := ty - by
			if tm < bm || tm == bm && td < bd {
				years--
			}
			if years < 18 {
				add("age-minimum", "AGE_TOO_LOW", "error", "profile.birthDate", pick(fr, "You must be at least 18 years old.", "Vous devez avoir au moins 18 ans."), locProfile)
			}
		}
	}
	if consent["terms"] != true {
		add("terms-accepted", "TERMS_REQUIRED", "error", "consent.terms", pick(fr, "Please accept the terms.", "Veuillez accepter les conditions."), locTerms)
	}
	if consent["newsletter"] == true && blank(profile["firstName"]) {
		add("newsletter-name", "NEWSLETTER_NAME", "info", "", "Tell us your first name to personalise the newsletter.", locConsent)
	}
	if before, _ := origAccount["email"].(string); !blank(origAccount["email"]) && origAccount["email"] != account["email"] {
		add("email-changed", "EMAIL_CHANGED", "warning", "account.email", "The e-mail address changes from "+before+" to "+email+".", locAccount)
	}
	res.Findings = f
	if account["kind"] == "business" {
		res.States = businessStates
	}
}

// pick returns the French text when fr is set (the French catalog has it), else the English.
func pick(fr bool, en, frText string) string {
	if fr {
		return frText
	}
	return en
}

// blank is the ruleset's function blank for strings, absent and null: empty after trimming.
func blank(v any) bool {
	switch s := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(s) == ""
	}
	return false
}

// validEmail is ^[^@ ]+@[^@ ]+[.][a-zA-Z]{2,}$.
func validEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	if at < 1 || strings.IndexByte(s, ' ') >= 0 || strings.IndexByte(s[at+1:], '@') >= 0 {
		return false
	}
	domain := s[at+1:]
	dot := strings.LastIndexByte(domain, '.')
	if dot < 1 || len(domain)-dot-1 < 2 {
		return false
	}
	for _, c := range []byte(domain[dot+1:]) {
		if c|0x20 < 'a' || c|0x20 > 'z' {
			return false
		}
	}
	return true
}

// validUsername is ^[a-z][a-z0-9_]{2,19}$.
func validUsername(s string) bool {
	if len(s) < 3 || len(s) > 20 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range []byte(s[1:]) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// parseDate reads a calendar date YYYY-MM-DD.
func parseDate(s string) (y, m, d int, ok bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, false
	}
	num := func(t string) int {
		n := 0
		for _, c := range []byte(t) {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, m, d = num(s[:4]), num(s[5:7]), num(s[8:])
	if y < 0 || m < 1 || m > 12 || d < 1 {
		return 0, 0, 0, false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && (y%4 == 0 && y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return y, m, d, d <= days
}
