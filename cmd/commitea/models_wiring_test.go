package main

import (
	"testing"

	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/models/modeltest"
	"github.com/commitea/commitea/worker/standup"
)

// The standups phrase with the small role of the router serve shares with
// the tools, and use the template when that role is not configured.
func TestStandupsPhraseWithTheSharedRouter(t *testing.T) {
	cfg, err := LoadConfig("", envMap(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	m := &Main{Getenv: envMap(map[string]string{})}
	small := modeltest.NewOpenAI(t)
	withSmall, _, _ := modeltest.Router(t, small, nil)
	bigOnly, _, _ := modeltest.Router(t, nil, modeltest.NewOpenAI(t))
	s, err := m.newStandups(cfg, nil, withSmall)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Phraser.(standup.ModelPhraser); !ok {
		t.Fatalf("with a small model the phraser is %T, want standup.ModelPhraser", s.Phraser)
	}
	for name, r := range map[string]*models.Router{"big only": bigOnly, "no router": nil} {
		s, err := m.newStandups(cfg, nil, r)
		if err != nil {
			t.Fatal(err)
		}
		if s.Phraser != nil {
			t.Fatalf("%s: phraser = %T, want none (the template)", name, s.Phraser)
		}
	}
}
