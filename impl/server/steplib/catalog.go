package steplib

// catalog declares every built-in step once. Each string parameter (and each docstring and table
// cell) is interpolated: ${name} is replaced by a variable (captured value, example column, leased
// account field or environment variable); $${name} stays literally ${name}.
var catalog = []Definition{
	// ---- HTTP: request set-up ----
	{
		ID: "http.base_url", Category: "http", Keyword: "Given",
		Pattern:     `the base URL is {string}`,
		Parameters:  []Param{{Name: "url", Type: "url", Description: "absolute URL that relative request paths and page addresses resolve against"}},
		Description: "Overrides the environment's base URL for the rest of the scenario.",
		Examples:    []string{`Given the base URL is "${apiUrl}"`},
	},
	{
		ID: "http.header", Category: "http", Keyword: "Given",
		Pattern: `I set the (request )header {string} to {string}`,
		Parameters: []Param{
			{Name: "name", Type: "string", Description: "header name"},
			{Name: "value", Type: "string", Description: "header value"},
		},
		Description: "Sends the header with every following request of the scenario.",
		Examples:    []string{`Given I set the header "Accept-Language" to "en"`},
	},
	{
		ID: "http.headers", Category: "http", Keyword: "Given",
		Pattern:     `I set the (request )headers:`,
		Parameters:  []Param{{Name: "headers", Type: "datatable", Description: "rows of | name | value |"}},
		Description: "Sends each header of the table with every following request of the scenario.",
		Examples:    []string{"Given I set the headers:\n  | Accept   | application/json |\n  | X-Tenant | ${tenant}        |"},
	},
	{
		ID: "http.query", Category: "http", Keyword: "Given",
		Pattern: `I set the query parameter {string} to {string}`,
		Parameters: []Param{
			{Name: "name", Type: "string", Description: "query parameter name"},
			{Name: "value", Type: "string", Description: "its value"},
		},
		Description: "Adds the query parameter to the next request only.",
		Examples:    []string{`Given I set the query parameter "page" to "2"`},
	},
	{
		ID: "http.bearer", Category: "http", Keyword: "Given",
		Pattern:     `I use the bearer token {string}`,
		Parameters:  []Param{{Name: "token", Type: "string", Description: "token sent as Authorization: Bearer <token>"}},
		Description: "Authenticates every following request with a bearer token.",
		Examples:    []string{`Given I use the bearer token "${apiToken}"`},
	},
	{
		ID: "http.basic_auth", Category: "http", Keyword: "Given",
		Pattern: `I use basic authentication with {string} and {string}`,
		Parameters: []Param{
			{Name: "username", Type: "string", Description: "user name"},
			{Name: "password", Type: "string", Description: "password"},
		},
		Description: "Authenticates every following request with HTTP basic authentication.",
		Examples:    []string{`Given I use basic authentication with "${user.username}" and "${user.password}"`},
	},
	// ---- HTTP: requests ----
	{
		ID: "http.request", Category: "http", Keyword: "When",
		Pattern: `I send a {word} request to {string}`,
		Parameters: []Param{
			{Name: "method", Type: "string", Description: "HTTP method: GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS"},
			{Name: "path", Type: "url", Description: "path resolved against the base URL, or an absolute URL"},
			{Name: "body", Type: "docstring", Description: "optional request body; a JSON body (or media type json) is sent as application/json"},
		},
		Description: "Sends a request and keeps its response for the assertions that follow.",
		Examples: []string{
			`When I send a GET request to "/api/users/${userId}"`,
			"When I send a POST request to \"/api/users\"\n  \"\"\"json\n  {\"name\": \"Ada\"}\n  \"\"\"",
		},
	},
	{
		ID: "http.request_form", Category: "http", Keyword: "When",
		Pattern: `I send a {word} request to {string} with form data:`,
		Parameters: []Param{
			{Name: "method", Type: "string", Description: "HTTP method"},
			{Name: "path", Type: "url", Description: "path resolved against the base URL, or an absolute URL"},
			{Name: "fields", Type: "datatable", Description: "rows of | name | value |, sent as application/x-www-form-urlencoded"},
		},
		Description: "Sends a form-encoded request.",
		Examples:    []string{"When I send a POST request to \"/login\" with form data:\n  | username | ${user.username} |\n  | password | ${user.password} |"},
	},
	// ---- HTTP: assertions ----
	{
		ID: "http.status", Category: "http", Keyword: "Then",
		Pattern:     `the response status (code )is {int}`,
		Parameters:  []Param{{Name: "status", Type: "int", Description: "expected HTTP status code"}},
		Description: "Fails unless the last response has this status code.",
		Examples:    []string{`Then the response status is 200`, `Then the response status code is 201`},
	},
	{
		ID: "http.header_is", Category: "http", Keyword: "Then",
		Pattern: `the response header {string} is {string}`,
		Parameters: []Param{
			{Name: "name", Type: "string", Description: "header name (case-insensitive)"},
			{Name: "value", Type: "string", Description: "expected value"},
		},
		Description: "Fails unless the last response's header equals the value.",
		Examples:    []string{`Then the response header "Content-Type" is "application/json"`},
	},
	{
		ID: "http.header_contains", Category: "http", Keyword: "Then",
		Pattern: `the response header {string} contains {string}`,
		Parameters: []Param{
			{Name: "name", Type: "string", Description: "header name (case-insensitive)"},
			{Name: "value", Type: "string", Description: "expected substring"},
		},
		Description: "Fails unless the last response's header contains the text.",
		Examples:    []string{`Then the response header "Content-Type" contains "json"`},
	},
	{
		ID: "http.body_contains", Category: "http", Keyword: "Then",
		Pattern:     `the response body contains {string}`,
		Parameters:  []Param{{Name: "text", Type: "string", Description: "expected substring"}},
		Description: "Fails unless the last response's body contains the text.",
		Examples:    []string{`Then the response body contains "created"`},
	},
	{
		ID: "http.json_is", Category: "http", Keyword: "Then",
		Pattern: `the response JSON at {string} is {string}`,
		Parameters: []Param{
			{Name: "path", Type: "string", Description: "JSONPath (RFC 9535) such as $.items[0].name; a path that can select several values ($.items[*].id, $.items[?@.id==2].name, $..id, $.items[0:2]) gives a list"},
			{Name: "value", Type: "string", Description: "expected value: compared as text with a string, otherwise parsed as JSON (42, true, null, {\"a\":1})"},
		},
		Description: "Fails unless the value at the JSONPath equals the expected value.",
		Examples:    []string{`Then the response JSON at "$.user.name" is "Ada"`, `Then the response JSON at "$.items[0].id" is "42"`},
	},
	{
		ID: "http.json_contains", Category: "http", Keyword: "Then",
		Pattern: `the response JSON at {string} contains {string}`,
		Parameters: []Param{
			{Name: "path", Type: "string", Description: "JSONPath"},
			{Name: "value", Type: "string", Description: "a substring of a string value, or an element of an array (parsed as JSON when it is JSON)"},
		},
		Description: "Fails unless the string at the JSONPath contains the text, or the array there contains the element.",
		Examples:    []string{`Then the response JSON at "$.tags" contains "admin"`},
	},
	{
		ID: "http.json_matches", Category: "http", Keyword: "Then",
		Pattern: `the response JSON at {string} matches {string}`,
		Parameters: []Param{
			{Name: "path", Type: "string", Description: "JSONPath"},
			{Name: "pattern", Type: "string", Description: "regular expression (Go RE2 syntax) the value's text must match"},
		},
		Description: "Fails unless the value at the JSONPath matches the regular expression.",
		Examples:    []string{`Then the response JSON at "$.id" matches "^[0-9a-f-]{36}$"`},
	},
	{
		ID: "http.json_exists", Category: "http", Keyword: "Then",
		Pattern:     `the response JSON at {string} exists`,
		Parameters:  []Param{{Name: "path", Type: "string", Description: "JSONPath"}},
		Description: "Fails unless the JSONPath selects a value (null counts); a filter, wildcard, slice or descendant path must select at least one.",
		Examples:    []string{`Then the response JSON at "$.token" exists`},
	},
	{
		ID: "http.json_length", Category: "http", Keyword: "Then",
		Pattern: `the response JSON at {string} has {int} item(s)`,
		Parameters: []Param{
			{Name: "path", Type: "string", Description: "JSONPath selecting an array, object or string"},
			{Name: "count", Type: "int", Description: "expected length"},
		},
		Description: "Fails unless the array (object, string) at the JSONPath has this length.",
		Examples:    []string{`Then the response JSON at "$.items" has 3 items`},
	},
	{
		ID: "http.json_body_contains", Category: "http", Keyword: "Then",
		Pattern:     `the response JSON contains:`,
		Parameters:  []Param{{Name: "expected", Type: "docstring", Description: "JSON; objects match when every expected member matches, arrays element by element"}},
		Description: "Fails unless the response body contains the expected JSON (a subset match).",
		Examples:    []string{"Then the response JSON contains:\n  \"\"\"json\n  {\"user\": {\"name\": \"Ada\"}}\n  \"\"\""},
	},
	{
		ID: "http.json_schema", Category: "http", Keyword: "Then",
		Pattern:     `the response JSON matches the schema:`,
		Parameters:  []Param{{Name: "schema", Type: "docstring", Description: "a JSON Schema of the draft its \"$schema\" names (4, 6, 7, 2019-09, 2020-12), draft 2020-12 without one; \"$ref\" only inside the schema"}},
		Description: "Fails unless the response body is valid against the schema, listing the violations (where in the response, which keyword). \"format\" is an annotation in drafts 2019-09 and 2020-12 (asserted in older drafts): use the step that checks formats to assert it.",
		Examples:    []string{"Then the response JSON matches the schema:\n  \"\"\"json\n  {\"type\": \"object\", \"required\": [\"id\"], \"properties\": {\"id\": {\"type\": \"integer\"}}}\n  \"\"\""},
	},
	{
		ID: "http.json_schema_formats", Category: "http", Keyword: "Then",
		Pattern:     `the response JSON matches the schema, checking formats:`,
		Parameters:  []Param{{Name: "schema", Type: "docstring", Description: "a JSON Schema, as for http.json_schema"}},
		Description: "Like http.json_schema, and \"format\" is an assertion whatever the draft: date-time, date, time, duration, email, hostname, ipv4, ipv6, uri, uri-reference, uuid, regex, json-pointer and the other formats of draft 2020-12.",
		Examples:    []string{"Then the response JSON matches the schema, checking formats:\n  \"\"\"json\n  {\"type\": \"object\", \"properties\": {\"email\": {\"type\": \"string\", \"format\": \"email\"}}}\n  \"\"\""},
	},
	{
		ID: "http.response_time", Category: "http", Keyword: "Then",
		Pattern:     `the response time is below {int} ms`,
		Parameters:  []Param{{Name: "ms", Type: "int", Description: "maximum duration in milliseconds"}},
		Description: "Fails when the last request took this long or longer.",
		Examples:    []string{`Then the response time is below 500 ms`},
	},
	// ---- HTTP: captures ----
	{
		ID: "http.capture_json", Category: "http", Keyword: "*",
		Pattern: `I store the response JSON at {string} as {string}`,
		Parameters: []Param{
			{Name: "path", Type: "string", Description: "JSONPath"},
			{Name: "variable", Type: "string", Description: "variable name, then usable as ${name}"},
		},
		Description: "Captures a value of the last response (strings as is, other values as JSON) into a variable.",
		Examples:    []string{`And I store the response JSON at "$.id" as "userId"`},
	},
	{
		ID: "http.capture_header", Category: "http", Keyword: "*",
		Pattern: `I store the response header {string} as {string}`,
		Parameters: []Param{
			{Name: "name", Type: "string", Description: "header name"},
			{Name: "variable", Type: "string", Description: "variable name"},
		},
		Description: "Captures a header of the last response into a variable.",
		Examples:    []string{`And I store the response header "Location" as "created"`},
	},

	// ---- data ----
	{
		ID: "data.set", Category: "data", Keyword: "Given",
		Pattern: `I set the variable {string} to {string}`,
		Parameters: []Param{
			{Name: "variable", Type: "string", Description: "variable name"},
			{Name: "value", Type: "string", Description: "value (interpolated)"},
		},
		Description: "Sets a variable for the rest of the scenario.",
		Examples:    []string{`Given I set the variable "email" to "${user.username}@example.test"`},
	},
	{
		ID: "data.assert", Category: "data", Keyword: "Then",
		Pattern: `the variable {string} is {string}`,
		Parameters: []Param{
			{Name: "variable", Type: "string", Description: "variable name"},
			{Name: "value", Type: "string", Description: "expected value (interpolated)"},
		},
		Description: "Fails unless the variable has this value.",
		Examples:    []string{`Then the variable "userId" is "42"`},
	},
	{
		ID: "data.lease", Category: "data", Keyword: "Given",
		Pattern:     `I use an account from the users pool`,
		Description: "Leases an account from the project's users pool for this scenario (released when it ends); its fields become ${user.username}, ${user.password} and ${user.<attribute>}.",
		Examples:    []string{`Given I use an account from the users pool`},
	},
	{
		ID: "data.lease_label", Category: "data", Keyword: "Given",
		Pattern:     `I use an account labelled {string} from the users pool`,
		Parameters:  []Param{{Name: "label", Type: "string", Description: "label (role) the account must carry"}},
		Description: "Leases an account carrying the label, like data.lease.",
		Examples:    []string{`Given I use an account labelled "admin" from the users pool`},
	},

	// ---- process ----
	{
		ID: "process.wait", Category: "process", Keyword: "*",
		Pattern:     `I wait {float} second(s)`,
		Parameters:  []Param{{Name: "seconds", Type: "float", Description: "how long to pause"}},
		Description: "Pauses the scenario; cancelling the run interrupts the pause.",
		Examples:    []string{`And I wait 1.5 seconds`},
	},
	{
		ID: "process.log", Category: "process", Keyword: "*",
		Pattern:     `I log {string}`,
		Parameters:  []Param{{Name: "message", Type: "string", Description: "text written to the run's log (interpolated; secrets masked)"}},
		Description: "Writes a line to the run's log.",
		Examples:    []string{`And I log "created user ${userId}"`},
	},
	{
		ID: "process.run", Category: "process", Keyword: "*",
		Pattern:     `I run the process {string}`,
		Parameters:  []Param{{Name: "name", Type: "string", Description: "name of one of the project's processes"}},
		Description: "Runs the steps of a named process of the project inline, sharing this scenario's variables, session and browser page.",
		Examples:    []string{`Given I run the process "sign-in"`},
	},
	{
		ID: "process.pending", Category: "process", Keyword: "*",
		Pattern:     `the step is pending`,
		Description: "Marks the scenario as pending (work in progress); the following steps are skipped.",
		Examples:    []string{`Then the step is pending`},
	},

	// ---- browser ----
	{
		ID: "browser.viewport", Category: "browser", Keyword: "Given",
		Pattern: `the viewport is {int}x{int}`,
		Parameters: []Param{
			{Name: "width", Type: "int", Description: "CSS pixels"},
			{Name: "height", Type: "int", Description: "CSS pixels"},
		},
		Description: "Sets the page's viewport (default 1280x800); screenshots and visual checks use it.",
		Examples:    []string{`Given the viewport is 1280x800`},
	},
	{
		ID: "browser.open", Category: "browser", Keyword: "*",
		Pattern:     `I open/visit {string}`,
		Parameters:  []Param{{Name: "url", Type: "url", Description: "path resolved against the base URL, or an absolute URL"}},
		Description: "Opens the page in the scenario's browser tab and waits for it to load.",
		Examples:    []string{`Given I open "/login"`},
	},
	{
		ID: "browser.click", Category: "browser", Keyword: "When",
		Pattern:     `I click (on ){string}`,
		Parameters:  []Param{{Name: "selector", Type: "selector", Description: "CSS selector (self-healing)"}},
		Description: "Clicks the element once it is visible.",
		Examples:    []string{`When I click "button[type=submit]"`},
	},
	{
		ID: "browser.fill", Category: "browser", Keyword: "When",
		Pattern: `I fill {string} with {string}`,
		Parameters: []Param{
			{Name: "selector", Type: "selector", Description: "CSS selector of an input or textarea (self-healing)"},
			{Name: "value", Type: "string", Description: "text typed after clearing the field"},
		},
		Description: "Clears the field and types the text.",
		Examples:    []string{`When I fill "#email" with "${user.username}"`},
	},
	{
		ID: "browser.select", Category: "browser", Keyword: "When",
		Pattern: `I select {string} in/from {string}`,
		Parameters: []Param{
			{Name: "option", Type: "string", Description: "the option's value or visible text"},
			{Name: "selector", Type: "selector", Description: "CSS selector of a select element (self-healing)"},
		},
		Description: "Selects the option of a select element and fires input and change events.",
		Examples:    []string{`When I select "Germany" from "#country"`},
	},
	{
		ID: "browser.press", Category: "browser", Keyword: "When",
		Pattern:     `I press {string}`,
		Parameters:  []Param{{Name: "key", Type: "string", Description: "a key name: Enter, Tab, Escape, Backspace, ArrowDown, ... or a single character"}},
		Description: "Presses a key in the focused element.",
		Examples:    []string{`When I press "Enter"`},
	},
	{
		ID: "browser.wait_for", Category: "browser", Keyword: "*",
		Pattern:     `I wait for {string}`,
		Parameters:  []Param{{Name: "selector", Type: "selector", Description: "CSS selector (self-healing)"}},
		Description: "Waits until the element is visible (the step timeout applies).",
		Examples:    []string{`And I wait for ".toast"`},
	},
	{
		ID: "browser.see_text", Category: "browser", Keyword: "Then",
		Pattern:     `I should see {string}`,
		Parameters:  []Param{{Name: "text", Type: "string", Description: "text expected in the page's visible text"}},
		Description: "Waits until the page shows the text, failing at the step timeout.",
		Examples:    []string{`Then I should see "Welcome, Ada"`},
	},
	{
		ID: "browser.see_text_in", Category: "browser", Keyword: "Then",
		Pattern: `I should see {string} in {string}`,
		Parameters: []Param{
			{Name: "text", Type: "string", Description: "expected text"},
			{Name: "selector", Type: "selector", Description: "CSS selector of the element (self-healing)"},
		},
		Description: "Waits until the element's visible text contains the text.",
		Examples:    []string{`Then I should see "3 items" in "#cart"`},
	},
	{
		ID: "browser.not_see_text", Category: "browser", Keyword: "Then",
		Pattern:     `I should not see {string}`,
		Parameters:  []Param{{Name: "text", Type: "string", Description: "text that must be absent"}},
		Description: "Fails when the page's visible text contains the text.",
		Examples:    []string{`Then I should not see "Error"`},
	},
	{
		ID: "browser.title", Category: "browser", Keyword: "Then",
		Pattern:     `the page title is {string}`,
		Parameters:  []Param{{Name: "title", Type: "string", Description: "expected document title"}},
		Description: "Fails unless the document title equals the text.",
		Examples:    []string{`Then the page title is "Dashboard"`},
	},
	{
		ID: "browser.url_contains", Category: "browser", Keyword: "Then",
		Pattern:     `the page URL contains {string}`,
		Parameters:  []Param{{Name: "text", Type: "string", Description: "expected substring of the current URL"}},
		Description: "Waits until the page's URL contains the text.",
		Examples:    []string{`Then the page URL contains "/dashboard"`},
	},
	{
		ID: "browser.value_is", Category: "browser", Keyword: "Then",
		Pattern: `the field {string} has the value {string}`,
		Parameters: []Param{
			{Name: "selector", Type: "selector", Description: "CSS selector of an input, textarea or select (self-healing)"},
			{Name: "value", Type: "string", Description: "expected value"},
		},
		Description: "Fails unless the form field's current value equals the text.",
		Examples:    []string{`Then the field "#email" has the value "ada@example.test"`},
	},
	{
		ID: "browser.store_text", Category: "browser", Keyword: "*",
		Pattern: `I store the text of {string} as {string}`,
		Parameters: []Param{
			{Name: "selector", Type: "selector", Description: "CSS selector (self-healing)"},
			{Name: "variable", Type: "string", Description: "variable name"},
		},
		Description: "Captures the element's visible text into a variable.",
		Examples:    []string{`And I store the text of "#order-id" as "orderId"`},
	},
	{
		ID: "browser.screenshot", Category: "browser", Keyword: "*",
		Pattern:     `I take a screenshot`,
		Description: "Attaches a PNG screenshot of the viewport to the step.",
		Examples:    []string{`And I take a screenshot`},
	},
	{
		ID: "browser.screenshot_named", Category: "browser", Keyword: "*",
		Pattern:     `I take a screenshot named {string}`,
		Parameters:  []Param{{Name: "name", Type: "string", Description: "attachment name"}},
		Description: "Attaches a PNG screenshot of the viewport to the step under a name.",
		Examples:    []string{`And I take a screenshot named "checkout"`},
	},
	{
		ID: "browser.visual_check", Category: "browser", Keyword: "Then",
		Pattern:     `the page matches the baseline {string}`,
		Parameters:  []Param{{Name: "name", Type: "string", Description: "baseline name, unique within the project"}},
		Description: "Captures the viewport and records a visual check against the named baseline (per browser and viewport).",
		Examples:    []string{`Then the page matches the baseline "login page"`},
	},
	{
		ID: "browser.visual_check_element", Category: "browser", Keyword: "Then",
		Pattern: `the element {string} matches the baseline {string}`,
		Parameters: []Param{
			{Name: "selector", Type: "selector", Description: "CSS selector (self-healing)"},
			{Name: "name", Type: "string", Description: "baseline name"},
		},
		Description: "Captures one element and records a visual check against the named baseline.",
		Examples:    []string{`Then the element "#chart" matches the baseline "sales chart"`},
	},
}
