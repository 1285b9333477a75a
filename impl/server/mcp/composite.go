package mcp

func (s *Server) addComposites() error { return nil }
func (s *Server) addResources() error  { return nil }
