package ruleserver

// The two evaluation paths and the member scan, for the external tests.

func (s *Server) EvaluateBody(body []byte) ([]byte, error) { return s.evaluate(body, nil) }

func (s *Server) EvaluateBodyParsed(body []byte) ([]byte, error) { return s.evaluateParsed(body, nil) }

func RulesetMember(b []byte) (string, bool) { return rulesetMember(b) }

func (s *Server) EvaluateBodyDirect(body []byte) ([]byte, bool) { return s.evaluateDirect(body, nil) }
