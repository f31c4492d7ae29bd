# Bootstraps the virtualenv and serves the hub on .\hub-data (or $env:SDLC_HUB_DATA).
$ErrorActionPreference = 'Stop'
& (Join-Path $PSScriptRoot 'bootstrap.ps1')
Set-Location (Join-Path $PSScriptRoot '..')
$data = if ($env:SDLC_HUB_DATA) { $env:SDLC_HUB_DATA } else { '.\hub-data' }
& .venv\Scripts\sdlc-hub.exe serve --data $data @args
exit $LASTEXITCODE
