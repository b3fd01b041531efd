//! The cubiclab packet simulator (see DESIGN.md, layer 2).
