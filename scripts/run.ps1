# Bootstraps the virtualenv and serves the hub on .\hub-data (or $env:SDLC_HUB_DATA).
# Extra arguments go to `sdlc-hub serve`. scripts\run.cmd --demo serves a demo hub on
# .\hub-demo instead: its own directory, never the real one.
$ErrorActionPreference = 'Stop'
& (Join-Path $PSScriptRoot 'bootstrap.ps1')
Set-Location (Join-Path $PSScriptRoot '..')
& .venv\Scripts\sdlc-hub.exe serve @args
exit $LASTEXITCODE
