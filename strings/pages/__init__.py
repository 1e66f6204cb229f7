"""The app's text: one module per page (named by the page's key in app_support.pages), and one per
area several pages share (common: navigation, sidebar, input notes, attention kinds; strategy: the
decoding strategy; tokens: how a sentence's tokens are shown). Each defines ``EN`` and ``ZH``."""
