package integrations

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/secrets"
)

// SecretAD is the additional data binding an integration's secret ciphertext to its place.
func SecretAD(projectID uuid.UUID, kind string) []byte {
	return []byte("integration:" + projectID.String() + ":" + kind)
}

// LoadWebhook decodes a stored webhook integration, opening its secret.
func LoadWebhook(box *secrets.Box, row db.Integration) (WebhookConfig, error) {
	var c WebhookConfig
	if err := json.Unmarshal(row.Config, &c); err != nil {
		return c, fmt.Errorf("webhook config: %w", err)
	}
	if len(row.SecretEnc) > 0 {
		s, err := box.Open(row.SecretEnc, SecretAD(row.ProjectID, row.Kind))
		if err != nil {
			return c, err
		}
		c.Secret = string(s)
	}
	return c, nil
}

// LoadGit decodes a stored Git integration, opening its secret.
func LoadGit(box *secrets.Box, row db.Integration) (GitConfig, error) {
	var c GitConfig
	if err := json.Unmarshal(row.Config, &c); err != nil {
		return c, fmt.Errorf("git config: %w", err)
	}
	if len(row.SecretEnc) > 0 {
		s, err := box.Open(row.SecretEnc, SecretAD(row.ProjectID, row.Kind))
		if err != nil {
			return c, err
		}
		c.Secret = string(s)
	}
	return c, nil
}
