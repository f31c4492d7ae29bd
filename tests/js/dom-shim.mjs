// A tiny DOM for node's test runner: enough of Document, Element and Text for the page's
// modules that build nodes (createElement, createTextNode, append, remove, setAttribute, textContent).
// Installed on globalThis by importing this module.

export class Node {
  constructor() {
    this.parentNode = null;
    this.childNodes = [];
  }

  get textContent() {
    return this.childNodes.map((child) => child.textContent).join('');
  }

  append(...nodes) {
    for (const node of nodes) this.appendChild(typeof node === 'string' ? new Text(node) : node);
  }

  appendChild(node) {
    if (node.parentNode) node.parentNode.childNodes.splice(node.parentNode.childNodes.indexOf(node), 1);
    node.parentNode = this;
    this.childNodes.push(node);
    return node;
  }

  remove() {
    if (this.parentNode) this.parentNode.childNodes.splice(this.parentNode.childNodes.indexOf(this), 1);
    this.parentNode = null;
  }

  replaceChildren(...nodes) {
    for (const child of this.childNodes) child.parentNode = null;
    this.childNodes = [];
    this.append(...nodes);
  }
}

export class Text extends Node {
  constructor(data) {
    super();
    this.data = String(data);
  }

  get textContent() {
    return this.data;
  }

  get nodeName() {
    return '#text';
  }
}

export class Element extends Node {
  constructor(tag) {
    super();
    this.tagName = tag.toUpperCase();
    this.attributes = new Map();
  }

  get nodeName() {
    return this.tagName;
  }

  setAttribute(name, value) {
    this.attributes.set(name, String(value));
  }

  getAttribute(name) {
    return this.attributes.has(name) ? this.attributes.get(name) : null;
  }

  removeAttribute(name) {
    this.attributes.delete(name);
  }

  addEventListener() {}

  get children() {
    return this.childNodes.filter((child) => child instanceof Element);
  }

  /** Every descendant element with this tag name (lower case), in document order. */
  all(tag) {
    const found = [];
    const walk = (node) => {
      for (const child of node.childNodes) {
        if (child instanceof Element) {
          if (!tag || child.tagName === tag.toUpperCase()) found.push(child);
          walk(child);
        }
      }
    };
    walk(this);
    return found;
  }

  /** A compact form for assertions: tag(children) with text in quotes. */
  get shape() {
    const inner = this.childNodes.map((child) => (child instanceof Element ? child.shape
      : JSON.stringify(child.data))).join(' ');
    return `${this.tagName.toLowerCase()}(${inner})`;
  }
}

globalThis.Node = Node;
globalThis.document = {
  createElement: (tag) => new Element(tag),
  createTextNode: (text) => new Text(text),
};
