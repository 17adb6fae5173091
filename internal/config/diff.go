package config

import (
	"reflect"
	"slices"
)

// ServerID names one (toolbox, server) pair: the unit the workbench starts,
// stops and keeps.
type ServerID struct {
	Toolbox, Server string
}

// Changes is what a reload changes, as [Diff] finds it. Every server of
// the new configuration is in exactly one of ServersAdded, ServersChanged
// and ServersUnchanged; every server only in the old one is in
// ServersRemoved. Lists follow file order (the old file's for removals).
type Changes struct {
	// Toolboxes only in the new configuration, only in the old one, and in
	// both but different: another description, or servers added, removed,
	// changed or reordered (what open_toolbox returns for it changes).
	ToolboxesAdded, ToolboxesRemoved, ToolboxesChanged []string
	// ToolboxesReordered is set when the toolboxes common to both are in
	// another order (the order the host is shown).
	ToolboxesReordered bool

	// ServersAdded are new pairs, those of added toolboxes included: to be
	// offered at once. ServersRemoved are pairs that are gone, those of
	// removed toolboxes included: to be stopped. ServersChanged are pairs
	// whose definition differs in any field (command, env, timeouts,
	// disabled, catalog, idle timeout…): to be stopped and started again
	// on next use with the new definition. ServersUnchanged keep running.
	ServersAdded, ServersRemoved, ServersChanged, ServersUnchanged []ServerID
}

// Empty reports whether the two configurations serve the same toolboxes
// and servers alike: there is nothing to apply.
func (c *Changes) Empty() bool {
	return len(c.ToolboxesAdded) == 0 && len(c.ToolboxesRemoved) == 0 && len(c.ToolboxesChanged) == 0 &&
		!c.ToolboxesReordered && len(c.ServersAdded) == 0 && len(c.ServersRemoved) == 0 && len(c.ServersChanged) == 0
}

// ToolboxListChanged reports whether what the host is shown of the
// toolboxes may have changed (names, order, descriptions, servers), so
// that the workbench updates open_toolbox and sends
// notifications/tools/list_changed.
func (c *Changes) ToolboxListChanged() bool {
	return len(c.ToolboxesAdded) > 0 || len(c.ToolboxesRemoved) > 0 || len(c.ToolboxesChanged) > 0 || c.ToolboxesReordered
}

// Diff compares two configurations, old and new; either may be nil (no
// toolboxes). It depends only on the toolboxes and servers, not on Path or
// Warnings.
func Diff(old, new *Config) Changes {
	var ch Changes
	oldTBs, newTBs := toolboxes(old), toolboxes(new)
	for _, otb := range oldTBs {
		if find(newTBs, otb.Name) == nil {
			ch.ToolboxesRemoved = append(ch.ToolboxesRemoved, otb.Name)
			for _, s := range otb.Servers {
				ch.ServersRemoved = append(ch.ServersRemoved, ServerID{otb.Name, s.Name})
			}
			continue
		}
		ntb := find(newTBs, otb.Name)
		for _, s := range otb.Servers {
			if ntb.Server(s.Name) == nil {
				ch.ServersRemoved = append(ch.ServersRemoved, ServerID{otb.Name, s.Name})
			}
		}
	}
	var commonOld, commonNew []string
	for _, otb := range oldTBs {
		if find(newTBs, otb.Name) != nil {
			commonOld = append(commonOld, otb.Name)
		}
	}
	for _, ntb := range newTBs {
		otb := find(oldTBs, ntb.Name)
		if otb == nil {
			ch.ToolboxesAdded = append(ch.ToolboxesAdded, ntb.Name)
			for _, s := range ntb.Servers {
				ch.ServersAdded = append(ch.ServersAdded, ServerID{ntb.Name, s.Name})
			}
			continue
		}
		commonNew = append(commonNew, ntb.Name)
		changed := otb.Description != ntb.Description || !slices.Equal(serverNames(otb), serverNames(ntb))
		for _, s := range ntb.Servers {
			id := ServerID{ntb.Name, s.Name}
			switch prev := otb.Server(s.Name); {
			case prev == nil:
				ch.ServersAdded = append(ch.ServersAdded, id)
			case !SameServer(prev, s):
				ch.ServersChanged = append(ch.ServersChanged, id)
				changed = true
			default:
				ch.ServersUnchanged = append(ch.ServersUnchanged, id)
			}
		}
		if changed {
			ch.ToolboxesChanged = append(ch.ToolboxesChanged, ntb.Name)
		}
	}
	ch.ToolboxesReordered = !slices.Equal(commonOld, commonNew)
	return ch
}

func toolboxes(c *Config) []*Toolbox {
	if c == nil {
		return nil
	}
	return c.Toolboxes
}

func find(tbs []*Toolbox, name string) *Toolbox {
	for _, tb := range tbs {
		if tb.Name == name {
			return tb
		}
	}
	return nil
}

func serverNames(tb *Toolbox) []string {
	names := make([]string, len(tb.Servers))
	for i, s := range tb.Servers {
		names[i] = s.Name
	}
	return names
}

// SameServer reports whether a and b define the same server: every field
// of [Server] equal but Shown and ShownFilters. It compares the fields by reflection, so that a field
// added to Server counts without this function knowing it. An empty map
// and no map are the same (no env is an empty env); lists are compared as
// they are (toolFilters [] offers no tool, a missing one every tool).
func SameServer(a, b *Server) bool {
	if a == nil || b == nil {
		return a == b
	}
	ca, cb := *a, *b
	for _, s := range []*Server{&ca, &cb} {
		// How the file writes a value is no part of the server.
		s.Shown, s.ShownFilters = "", nil
		s.Permissions = nil // applied per call, from the configuration in force
		v := reflect.ValueOf(s).Elem()
		for i := range v.NumField() {
			if f := v.Field(i); f.Kind() == reflect.Map && f.Len() == 0 && f.CanSet() {
				f.SetZero()
			}
		}
	}
	return reflect.DeepEqual(ca, cb)
}
