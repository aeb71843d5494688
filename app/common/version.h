// The program version: CMake's project(VERSION) in the top-level CMakeLists.txt is its one home.
#pragma once

namespace qc::app {

const char* version();  // "0.1.0"

// Every program takes --version as its only argument (packagers and help2man ask for it): prints
// "NAME VERSION" on stdout and returns true; false for any other command line.
bool print_version_if_asked(const char* name, int argc, char** argv);

}  // namespace qc::app
