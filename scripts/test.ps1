# Bootstraps the virtualenv and runs the whole test suite (Windows PowerShell).
$ErrorActionPreference = 'Stop'
& (Join-Path $PSScriptRoot 'bootstrap.ps1')
Set-Location (Join-Path $PSScriptRoot '..')
& .venv\Scripts\python.exe -m pytest @args
exit $LASTEXITCODE
