package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
)

// httpAuth makes the authentication and limits of "http.auth".
func httpAuth(context.Context, *config.Config, *slog.Logger) (front.Auth, func(http.Handler) http.Handler, error) {
	return nil, nil, errors.New("\"http.auth\" is not supported yet")
}
