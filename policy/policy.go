// Package policy embeds the casbin model and policy that decide which role may take which action.
package policy

import _ "embed"

// Model is the casbin model (model.conf).
//
//go:embed model.conf
var Model string

// Policy is the casbin policy (policy.csv): role grants and the role hierarchy.
//
//go:embed policy.csv
var Policy string
