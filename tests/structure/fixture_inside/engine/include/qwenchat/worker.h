// Fixture only: a public header.
#pragma once
