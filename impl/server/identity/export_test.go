package identity

import "time"

// SetTokenClock makes s's token cache read the time from now (tests of its expiry).
func SetTokenClock(s *Service, now func() time.Time) { s.tokens.now = now }
