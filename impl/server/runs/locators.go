package runs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/steplib"
	"github.com/sdods/sdods/impl/server/store"
)

// Locators keeps self-healing alternatives in PostgreSQL, so that every process heals with what
// any earlier passing run recorded. The runner names a project by its id.
type Locators struct {
	st *store.Store
}

// NewLocators returns the PostgreSQL locator store.
func NewLocators(st *store.Store) *Locators { return &Locators{st: st} }

var _ steplib.LocatorStore = (*Locators)(nil)

// Load implements steplib.LocatorStore.
func (l *Locators) Load(ctx context.Context, project, selector string) ([]steplib.Alternative, error) {
	pid, err := uuid.Parse(project)
	if err != nil {
		return nil, fmt.Errorf("locators: project %q is not an id", project)
	}
	raw, err := l.st.GetLocatorAlternatives(ctx, db.GetLocatorAlternativesParams{ProjectID: pid, Selector: selector})
	if store.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var alts []steplib.Alternative
	if err := json.Unmarshal(raw, &alts); err != nil {
		return nil, fmt.Errorf("locators: %w", err)
	}
	return alts, nil
}

// Save implements steplib.LocatorStore.
func (l *Locators) Save(ctx context.Context, project, selector string, alts []steplib.Alternative) error {
	pid, err := uuid.Parse(project)
	if err != nil {
		return fmt.Errorf("locators: project %q is not an id", project)
	}
	raw, err := json.Marshal(alts)
	if err != nil {
		return err
	}
	return l.st.SaveLocatorAlternatives(ctx, db.SaveLocatorAlternativesParams{ProjectID: pid, Selector: selector, Alternatives: raw})
}
