// pdf.js loads this inside try/catch and renders nothing without it; engram only extracts text.
throw new Error("@napi-rs/canvas is not installed: engram extracts PDF text and does not render pages")
